// OpCall: one instance of an op type — its arg counts (variadic inputs,
// present optional inputs) and its attributes with defaults applied — and
// the blob names that go with it. ShapeContext: what a shape function sees.
//
// Example:
//   absl::StatusOr<std::shared_ptr<const OpCall>> call =
//       OpCall::Make(registry.Find("add_n"), /*input_counts=*/{3}, AttrMap());
//   (*call)->bn(0);            // "in_0"
//   (*call)->bn(3);            // "out_0"   (inputs first, then outputs)
//   (*call)->ToString();       // "add_n(in_0, in_1, in_2 -> out_0)"
//
// Blob names follow OneFlow: "<arg>_<index>". Blob indices number inputs in
// declared arg order then index order, then outputs the same way; every
// per-blob array in the engine (signatures, constraints) uses this order.
// OpCalls are immutable and shared; hash() is precomputed and covers the op
// definition, the counts and the attributes. Equality compares the OpDef's
// identity, not its name: the same name in two registries is two ops.
#ifndef ONEFLOW_SBP_RULE_API_OP_CALL_H_
#define ONEFLOW_SBP_RULE_API_OP_CALL_H_

#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "absl/types/span.h"
#include "oneflow_sbp/values/attr_value.h"
#include "oneflow_sbp/rule_api/op_def.h"
#include "oneflow_sbp/values/tensor_desc.h"

namespace oneflow_sbp {

// One blob as a rule names it: arg name and index (OneFlow's
// (arg_name, index) pairs). `name` views a string owned by the OpDef.
struct OpArg {
  absl::string_view name;
  int index = 0;
};

class OpCall {
 public:
  // input_counts: one entry per declared input arg; 0 only for optional
  // args, >= 1 otherwise, exactly 1 for non-variadic args. Attributes must
  // be declared and of the declared type (an int is accepted for a float);
  // missing ones take their defaults, missing required ones are errors.
  // All errors are kInvalidArgument naming the op and the arg or attribute;
  // a null `def` (OpRegistry::Find of an unknown name) is one too.
  static absl::StatusOr<std::shared_ptr<const OpCall>> Make(
      std::shared_ptr<const OpDef> def, std::vector<int> input_counts,
      const AttrMap& attrs);

  // Input counts for `num_inputs` blobs given in declared order: required
  // args take one each, then optional args in declared order while blobs
  // remain, and a variadic arg takes the rest. kInvalidArgument if the
  // number cannot be matched.
  static absl::StatusOr<std::vector<int>> DeduceInputCounts(const OpDef& def,
                                                            int num_inputs);

  const OpDef& def() const { return *def_; }
  const std::string& type_name() const { return def_->type_name(); }
  const AttrMap& attrs() const { return attrs_; }
  const std::vector<int>& input_counts() const { return input_counts_; }
  const std::vector<int>& output_counts() const { return output_counts_; }

  int num_inputs() const { return num_inputs_; }
  int num_outputs() const { return static_cast<int>(blobs_.size()) - num_inputs_; }
  int num_blobs() const { return static_cast<int>(blobs_.size()); }
  // "a_0". Requires 0 <= blob < num_blobs().
  const std::string& bn(int blob) const { return bns_[blob]; }
  // The args of every input / output blob, in blob order.
  const std::vector<OpArg>& inputs() const { return input_args_; }
  const std::vector<OpArg>& outputs() const { return output_args_; }
  // Blob index, or -1 if the op has no such blob (undeclared arg, absent
  // optional arg, index out of range).
  int InputBlob(absl::string_view arg, int index) const;
  int OutputBlob(absl::string_view arg, int index) const;
  int BlobIndexOf(absl::string_view bn) const;
  // True if input blob `blob` belongs to a mutable arg (never boxed).
  bool is_mutable_input(int blob) const;

  // "matmul(a_0, b_0 -> out_0; transpose_b=true)".
  std::string ToString() const;
  size_t hash() const { return hash_; }

  // Runs the shape function on logical input descs (in blob order). Errors
  // are prefixed with the op type; a function that leaves an output unset
  // is kInternal.
  absl::StatusOr<std::vector<TensorDesc>> InferOutputDescs(
      absl::Span<const TensorDesc> inputs) const;

  friend bool operator==(const OpCall& a, const OpCall& b);

 private:
  struct Blob {
    bool is_input;
    int arg;  // index into def inputs()/outputs()
    int index;
  };
  OpCall() = default;

  std::shared_ptr<const OpDef> def_;
  AttrMap attrs_;
  std::vector<int> input_counts_;
  std::vector<int> output_counts_;
  std::vector<Blob> blobs_;
  std::vector<std::string> bns_;
  std::vector<OpArg> input_args_;
  std::vector<OpArg> output_args_;
  int num_inputs_ = 0;
  size_t hash_ = 0;
};

// What a shape function sees: logical input descs and attributes; it sets
// every output desc.
class ShapeContext {
 public:
  ShapeContext(const OpCall& call, absl::Span<const TensorDesc> inputs);

  const std::string& op_type() const { return call_.type_name(); }
  const OpCall& op() const { return call_; }
  // The desc of input blob <arg>_<index>. Asking for a blob the op lacks is
  // a bug in the shape function: it is recorded (status() turns kInternal)
  // and a scalar desc stands in for the missing blob.
  const TensorDesc& input(absl::string_view arg, int index = 0);
  bool has_input(absl::string_view arg, int index = 0) const;
  int input_count(absl::string_view arg) const;
  int output_count(absl::string_view arg) const;
  // The attribute, or T{} with a bug recorded in status() (kInternal) if
  // the op does not declare it or it has another type.
  template <typename T>
  T Attr(absl::string_view name) {
    return AttrOrRecordBug<T>(call_.attrs(), name, "shape function", &status_);
  }
  // Sets output <arg>_<index> (recorded as a bug if the op lacks it).
  void set_output(absl::string_view arg, int index, TensorDesc desc);

  absl::Status status() const { return status_; }
  std::vector<std::optional<TensorDesc>>& outputs() { return outputs_; }

 private:
  const OpCall& call_;
  absl::Span<const TensorDesc> inputs_;
  std::vector<std::optional<TensorDesc>> outputs_;
  absl::Status status_;
};

}  // namespace oneflow_sbp

#endif  // ONEFLOW_SBP_RULE_API_OP_CALL_H_
