// Program: a whole distributed program as graph-level selection sees it:
// one placement, named tensors, and ops in program order that read tensors
// and define new ones.
//
// Example:
//   ProgramBuilder b(registry, *Placement::Parse("cpu:0-3 [2,2]"));
//   b.AddInput("x", *TensorDesc::Parse("f32[64,256]"), *NdSbp::Parse("(S(0),B)"));
//   b.AddParameter("w1", *TensorDesc::Parse("f32[256,1024]"));
//   b.AddOp("matmul", {"x", "w1"}, {"h"}, AttrMap());
//   absl::StatusOr<Program> program = std::move(b).Build();
//
// Tensors have one of three roles:
//   fixed       a marked input: its layout is given (nd_sbp) and kept;
//   free        a parameter: listed without a layout, the solver picks one
//               (shared by every op that reads it);
//   activation  defined by an op's output; its desc comes from the op's
//               shape function (OpCall::InferOutputDescs), its layout from
//               the op's chosen signature.
// Program outputs are tensors whose final layout matters: with a required
// nd_sbp the result is boxed to it; without one it must hold no partial
// sums (each P axis is reduced to B). If no output is marked, every named
// op output that no op reads is an output (with no required layout).
//
// Every error is kInvalidArgument (kNotFound for an unknown op) and names
// the op (its label: the user's name, else "op <index> (<type>)") and the
// tensor or value at fault.
#ifndef GRAPH_PROGRAM_H_
#define GRAPH_PROGRAM_H_

#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "absl/container/flat_hash_set.h"
#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "oneflow_sbp/values/attr_value.h"
#include "oneflow_sbp/values/nd_sbp.h"
#include "oneflow_sbp/rule_api/op_call.h"
#include "oneflow_sbp/rule_api/op_registry.h"
#include "oneflow_sbp/values/placement.h"
#include "oneflow_sbp/values/tensor_desc.h"

namespace oneflow_sbp::graph {

enum class TensorRole : uint8_t { kFixed, kFree, kActivation };

// "fixed", "free", "activation".
absl::string_view TensorRoleName(TensorRole role);

// Where a tensor is read: input blob `blob` of op `op`.
struct TensorUse {
  int op = 0;
  int blob = 0;
};

struct ProgramTensor {
  std::string name;
  TensorDesc desc;
  TensorRole role = TensorRole::kFree;
  // kFixed only: the given layout.
  NdSbp nd_sbp;
  // kFixed only: a parameter kept in its given layout (a training step,
  // eager/expand_training_step.h, trains it as it trains free tensors).
  bool parameter = false;
  // kActivation only: the op that defines it and the output blob (index
  // into the op call's blobs, inputs first).
  int producer = -1;
  int producer_blob = -1;
  // Every read, in program order (an op reading it twice appears twice).
  std::vector<TensorUse> uses;
};

struct ProgramOp {
  // The user's name, or "op <index> (<type>)".
  std::string label;
  std::shared_ptr<const OpCall> call;
  // Tensor ids, one per input blob / output blob of `call`.
  std::vector<int> inputs;
  std::vector<int> outputs;
};

struct ProgramOutput {
  int tensor = 0;
  // Required layout; unset means "any layout without partial sums".
  std::optional<NdSbp> nd_sbp;
};

class Program {
 public:
  const Placement& placement() const { return placement_; }
  // Ids index these vectors; tensors in definition order.
  const std::vector<ProgramTensor>& tensors() const { return tensors_; }
  const std::vector<ProgramOp>& ops() const { return ops_; }
  const std::vector<ProgramOutput>& outputs() const { return outputs_; }
  // The tensor's id, or -1.
  int FindTensor(absl::string_view name) const;
  // The ids of free tensors, in definition order.
  std::vector<int> FreeTensors() const;

 private:
  friend class ProgramBuilder;
  Placement placement_;
  std::vector<ProgramTensor> tensors_;
  std::vector<ProgramOp> ops_;
  std::vector<ProgramOutput> outputs_;
  absl::flat_hash_map<std::string, int> by_name_;
};

// Builds a Program op by op. Each call checks what it is given at once, so
// the first error stops the program where the user wrote it; after an
// error the builder should be dropped.
class ProgramBuilder {
 public:
  // `registry` must outlive the builder.
  ProgramBuilder(const OpRegistry& registry, Placement placement);

  // A marked input with its layout: one entry per mesh axis, no unset entry,
  // splits within the shape (ValidateNdSbp). Names are unique and non-empty.
  // `parameter`: a weight marked in a layout (ProgramTensor::parameter).
  absl::Status AddInput(absl::string_view name, TensorDesc desc, NdSbp nd_sbp,
                        bool parameter = false);
  // A free tensor (parameter) whose layout the solver chooses.
  absl::Status AddParameter(absl::string_view name, TensorDesc desc);
  // Appends an op reading `inputs` (defined names, in the op's declared
  // input order; optional inputs may be left off the end) and defining
  // `outputs` (new names, at most one per output blob; blobs left unnamed
  // get "<label>:<bn>" and are never default program outputs). Attributes
  // must be declared and typed (OpCall::Make). The shape function runs
  // here; its errors come back prefixed with the label. `label` empty
  // means "op <index> (<type>)".
  absl::Status AddOp(absl::string_view type, const std::vector<std::string>& inputs,
                     const std::vector<std::string>& outputs, const AttrMap& attrs,
                     absl::string_view label = "");
  // Marks a program output (any tensor; at most once each).
  absl::Status MarkOutput(absl::string_view name, std::optional<NdSbp> nd_sbp);

  // The program; applies the default outputs if none was marked.
  // kInvalidArgument if there is no op.
  absl::StatusOr<Program> Build() &&;

 private:
  absl::Status AddTensor(absl::string_view name, ProgramTensor tensor);
  const OpRegistry& registry_;
  Program program_;
  // Per tensor: named by the user (not "<label>:<bn>").
  std::vector<bool> user_named_;
  // Every op's label, so a duplicate is found in O(1) (a scan of all ops
  // made loading quadratic in the op count).
  absl::flat_hash_set<std::string> labels_;
  // Tensors marked as outputs (MarkOutput), likewise.
  absl::flat_hash_set<int> marked_;
};

}  // namespace oneflow_sbp::graph

#endif  // GRAPH_PROGRAM_H_
