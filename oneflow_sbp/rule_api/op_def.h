// OpDef: what an op type declares once, at registration — its input and
// output args, typed attributes with defaults, a logical shape/dtype
// function and its SBP rule.
//
// Example (the shape of a registration; see ops/ for real ones):
//   absl::StatusOr<OpDef> def =
//       OpDefBuilder("matmul")
//           .Input("a").Input("b").OptionalInput("_add_to_output")
//           .Output("out")
//           .Attr("transpose_a", AttrValue(false))
//           .Attr("transpose_b", AttrValue(false))
//           .Attr("alpha", AttrValue(1.0))
//           .SetShapeFn(MatmulShape)
//           .SetGetSbpFn(MatmulGetSbp)
//           .Build();
//
// Every op must either give a GetSbp rule or opt in to the broadcast-only
// fallback with BroadcastOnlyFallback(); Build() rejects an op with neither,
// so a missing rule is never silent (fallback ops are marked in `sbp ops`,
// counted in engine stats and shown in explanations).
#ifndef ONEFLOW_SBP_RULE_API_OP_DEF_H_
#define ONEFLOW_SBP_RULE_API_OP_DEF_H_

#include <functional>
#include <optional>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "oneflow_sbp/values/attr_value.h"

namespace oneflow_sbp {

class ShapeContext;
class SbpContext;
class NdCandidateContext;

struct ArgDef {
  std::string name;
  // Blobs <name>_0, <name>_1, ...; the op call fixes the count (>= 1).
  bool variadic = false;
  // May be absent (count 0). Absent args get no blob and no SBP.
  bool optional = false;
  // The op writes this input in place (assign, optimizer updates): it must
  // keep its layout, so inference never boxes it (SPEC.md §3 "requires the
  // same SBP").
  bool is_mutable = false;
};

struct AttrDef {
  std::string name;
  AttrType type = AttrType::kInt;
  // Absent means the attribute is required.
  std::optional<AttrValue> default_value;
};

// Computes output descs from input descs and attributes. Errors name the
// blob and the value; the engine prefixes the op type.
using ShapeFn = std::function<absl::Status(ShapeContext&)>;
// Appends 1-D candidate signatures through ctx.NewBuilder() (SPEC.md §5).
using GetSbpFn = std::function<absl::Status(SbpContext&)>;
// Edits the N-D candidate list after the direct product (SPEC.md §3 step 3;
// only reshape-class ops use it).
using NdCandidateHookFn = std::function<absl::Status(NdCandidateContext&)>;
// Output counts per output arg, for ops whose variadic outputs depend on
// attributes (split, unstack). Absent: 1 per output arg.
using OutputArityFn = std::function<absl::StatusOr<std::vector<int>>(
    const AttrMap& attrs, const std::vector<int>& input_counts)>;

class OpDef {
 public:
  const std::string& type_name() const { return type_name_; }
  const std::vector<ArgDef>& inputs() const { return inputs_; }
  const std::vector<ArgDef>& outputs() const { return outputs_; }
  const std::vector<AttrDef>& attrs() const { return attrs_; }
  const std::string& doc() const { return doc_; }

  const ShapeFn& shape_fn() const { return shape_fn_; }
  // Empty for broadcast-fallback ops.
  const GetSbpFn& get_sbp_fn() const { return get_sbp_fn_; }
  // Candidates beyond OneFlow's (partials of max or min, which OneFlow
  // lacks), appended after get_sbp_fn()'s only when a policy asks for them
  // (CandidateSource::extended_partials). Empty for most ops.
  const GetSbpFn& extended_sbp_fn() const { return extended_sbp_fn_; }
  const NdCandidateHookFn& nd_candidate_hook() const { return nd_hook_; }
  const OutputArityFn& output_arity_fn() const { return output_arity_fn_; }
  // True if the op has no rule and explicitly accepted all-B only.
  bool uses_broadcast_fallback() const { return broadcast_fallback_; }

  // nullptr if absent.
  const AttrDef* FindAttr(absl::string_view name) const;
  // Index into inputs()/outputs(), or -1.
  int FindInput(absl::string_view name) const;
  int FindOutput(absl::string_view name) const;

 private:
  friend class OpDefBuilder;
  std::string type_name_;
  std::vector<ArgDef> inputs_;
  std::vector<ArgDef> outputs_;
  std::vector<AttrDef> attrs_;
  std::string doc_;
  ShapeFn shape_fn_;
  GetSbpFn get_sbp_fn_;
  GetSbpFn extended_sbp_fn_;
  NdCandidateHookFn nd_hook_;
  OutputArityFn output_arity_fn_;
  bool broadcast_fallback_ = false;
};

class OpDefBuilder {
 public:
  explicit OpDefBuilder(std::string type_name);

  const std::string& type_name() const { return def_.type_name_; }

  OpDefBuilder& Input(std::string name);
  OpDefBuilder& OptionalInput(std::string name);
  OpDefBuilder& VariadicInput(std::string name);
  // An input the op updates in place; see ArgDef::is_mutable.
  OpDefBuilder& MutableInput(std::string name);
  OpDefBuilder& Output(std::string name);
  OpDefBuilder& VariadicOutput(std::string name);
  OpDefBuilder& Attr(std::string name, AttrValue default_value);
  OpDefBuilder& RequiredAttr(std::string name, AttrType type);
  OpDefBuilder& Doc(std::string doc);
  OpDefBuilder& SetShapeFn(ShapeFn fn);
  OpDefBuilder& SetGetSbpFn(GetSbpFn fn);
  // See OpDef::extended_sbp_fn.
  OpDefBuilder& SetExtendedSbpFn(GetSbpFn fn);
  OpDefBuilder& SetNdCandidateHook(NdCandidateHookFn fn);
  OpDefBuilder& SetOutputArityFn(OutputArityFn fn);
  // Declares that the op has no SBP rule: only the all-B signature.
  OpDefBuilder& BroadcastOnlyFallback();

  // kInvalidArgument for: empty or malformed names, duplicate arg or attr
  // names, no shape function, neither a rule nor the fallback (or both), a
  // variadic output without an OutputArityFn.
  absl::StatusOr<OpDef> Build() const;

 private:
  OpDef def_;
};

}  // namespace oneflow_sbp

#endif  // ONEFLOW_SBP_RULE_API_OP_DEF_H_
