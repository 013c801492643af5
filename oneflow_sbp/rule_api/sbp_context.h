// The rule API: what an op's GetSbp rule sees (SbpContext) and how it
// writes candidates (SbpSignatureBuilder), modelled on OneFlow's
// SbpContext / UserOpSbpSignatureBuilder (SPEC.md §5).
//
// Example (matmul's first two candidates, 1-D):
//   absl::Status MatmulGetSbp(SbpContext& ctx) {
//     ctx.NewBuilder().Split(OpArg{"a", 0}, 0).Broadcast(OpArg{"b", 0})
//         .Split(ctx.outputs(), 0).Build();
//     ctx.NewBuilder().Broadcast(OpArg{"a", 0}).Split(OpArg{"b", 0}, 1)
//         .Split(ctx.outputs(), 1).Build();
//     return absl::OkStatus();
//   }
//
// Contract:
// * A rule is called once per 1-D list: with hierarchy_value() ==
//   parallel_num() on 1-D placements, once per distinct mesh extent on N-D
//   ones. It sees logical input and output descs (outputs as the shape function
//   computed them), attributes with defaults, and the device type.
// * Builder methods overwrite the SBP of the named blobs and chain. Build()
//   appends a copy of the current signature and keeps the state, so a
//   reused builder accumulates (as in OneFlow).
// * Args the op declares but this call lacks (absent optional inputs) are
//   skipped silently; an undeclared arg or an index beyond the arg's count,
//   or an attribute the op does not declare (or reads with another type),
//   is a rule bug, recorded in status() (kInternal) rather than aborting.
// * Every built signature must name every blob; the engine checks that.
#ifndef ONEFLOW_SBP_RULE_API_SBP_CONTEXT_H_
#define ONEFLOW_SBP_RULE_API_SBP_CONTEXT_H_

#include <cstdint>
#include <initializer_list>
#include <vector>

#include "absl/status/status.h"
#include "absl/types/span.h"
#include "oneflow_sbp/rule_api/op_call.h"
#include "oneflow_sbp/values/placement.h"
#include "oneflow_sbp/rule_api/sbp_signature.h"
#include "oneflow_sbp/values/tensor_desc.h"

namespace oneflow_sbp {

class SbpContext;

class SbpSignatureBuilder {
 public:
  SbpSignatureBuilder& Split(const OpArg& arg, int axis);
  SbpSignatureBuilder& Split(absl::Span<const OpArg> args, int axis);
  SbpSignatureBuilder& Split(std::initializer_list<OpArg> args, int axis);
  SbpSignatureBuilder& Broadcast(const OpArg& arg);
  SbpSignatureBuilder& Broadcast(absl::Span<const OpArg> args);
  SbpSignatureBuilder& Broadcast(std::initializer_list<OpArg> args);
  SbpSignatureBuilder& PartialSum(const OpArg& arg);
  SbpSignatureBuilder& PartialSum(absl::Span<const OpArg> args);
  SbpSignatureBuilder& PartialSum(std::initializer_list<OpArg> args);
  // A partial of `kind` (sum, max, min); only extended rules
  // (OpDef::extended_sbp_fn) write max or min.
  SbpSignatureBuilder& Partial(const OpArg& arg, PartialKind kind);
  SbpSignatureBuilder& Partial(absl::Span<const OpArg> args, PartialKind kind);
  // Appends a copy of the current signature to the context's list.
  SbpSignatureBuilder& Build();

 private:
  friend class SbpContext;
  explicit SbpSignatureBuilder(SbpContext* ctx);
  SbpSignatureBuilder& Set(const OpArg& arg, SbpParallel sbp);

  SbpContext* ctx_;
  SbpSignature sig_;
};

class SbpContext {
 public:
  SbpContext(const OpCall& call, absl::Span<const TensorDesc> inputs,
             absl::Span<const TensorDesc> outputs, int64_t hierarchy_value,
             int64_t parallel_num, DeviceType device_type);

  const OpCall& op() const { return call_; }
  const std::string& op_type() const { return call_.type_name(); }
  // Logical desc of input <arg>_<index>; a blob the call lacks is recorded
  // as a rule bug and a scalar desc stands in for the missing blob.
  const TensorDesc& LogicalTensorDesc4InputArgNameAndIndex(absl::string_view arg,
                                                           int index);
  const TensorDesc& input_desc(absl::string_view arg, int index = 0) {
    return LogicalTensorDesc4InputArgNameAndIndex(arg, index);
  }
  // Logical desc of output <arg>_<index>, as the shape function computed
  // it (OneFlow hides outputs from rules; we have them already, and
  // view-like rules need the output shape). Same misuse handling as inputs.
  const TensorDesc& output_desc(absl::string_view arg, int index = 0);
  // Inputs / outputs of this call in declared order (absent optional
  // inputs are not listed).
  const std::vector<OpArg>& inputs() const { return call_.inputs(); }
  const std::vector<OpArg>& outputs() const { return call_.outputs(); }
  bool has_input(absl::string_view arg, int index = 0) const {
    return call_.InputBlob(arg, index) >= 0;
  }
  // The attribute, or T{} with a rule bug recorded (kInternal naming the
  // attribute) if the op does not declare it or it has another type.
  template <typename T>
  T Attr(absl::string_view name) {
    return AttrOrRecordBug<T>(call_.attrs(), name, "", &status_);
  }
  // Extent of the mesh axis being enumerated (== parallel_num() in 1-D).
  int64_t hierarchy_value() const { return hierarchy_value_; }
  int64_t parallel_num() const { return parallel_num_; }
  DeviceType device_type() const { return device_type_; }

  // A fresh, empty builder bound to this context's candidate list.
  SbpSignatureBuilder NewBuilder() { return SbpSignatureBuilder(this); }

  // Candidates in emission order.
  std::vector<SbpSignature>& candidates() { return candidates_; }
  // Marks the end of OneFlow's own list: what the rule emits from here on
  // are candidates OneFlow lacks, appended so that OneFlow's order is
  // unchanged (docs/OPS.md). The op's record says what they are (`ours`,
  // which op_completeness_test holds to the rule). Called at most once,
  // before the first of them, whether or not this call emits any.
  void OursFollow();
  // Whether the rule called OursFollow().
  bool marks_ours() const { return oneflow_count_ >= 0; }
  // How many of candidates() are OneFlow's: all of them unless the rule
  // called OursFollow().
  size_t oneflow_candidate_count() const {
    return marks_ours() ? static_cast<size_t>(oneflow_count_) : candidates_.size();
  }
  // OK unless the rule misused the API (see the header comment).
  const absl::Status& status() const { return status_; }
  void RecordRuleBug(absl::string_view message);

 private:
  friend class SbpSignatureBuilder;
  const OpCall& call_;
  absl::Span<const TensorDesc> inputs_;
  absl::Span<const TensorDesc> outputs_;
  int64_t hierarchy_value_;
  int64_t parallel_num_;
  DeviceType device_type_;
  std::vector<SbpSignature> candidates_;
  // candidates_.size() when OursFollow() was called; -1 before.
  int64_t oneflow_count_ = -1;
  absl::Status status_;
};

// OneFlow's GetSbpFnUtil::SplitForEachAxis: requires >= 1 input, all of
// input 0's rank (else kInvalidArgument naming the blobs), and emits
// inputs:S(i) -> outputs:S(i) for every i < rank.
absl::Status SplitForEachAxis(SbpContext& ctx);

}  // namespace oneflow_sbp

#endif  // ONEFLOW_SBP_RULE_API_SBP_CONTEXT_H_
