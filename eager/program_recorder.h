// ProgramRecorder: captures the forward op calls of an eager program as a
// program for graph-level planning (`sbp plan`, docs/PLANNING.md), so a
// real model's program comes for free: `sbp demo --record=FILE.json`.
//
//   ProgramRecorder rec(placement);
//   rec.Name(w, "layer0.wq");
//   ctx.set_recorder(&rec);  ... forward ...  ctx.set_recorder(nullptr);
//   rec.tensors(); rec.ops();   // tools/ turns them into a ProgramProto
//
// Tensors an op reads that no recorded op produced are leaves: a leaf that
// requires grad is a parameter (free: the planner picks its layout), any
// other leaf is a marked input with its current layout. Op outputs are
// named "<op index>.<bn>" unless named. Calls made while Backward runs are
// not recorded unless set_record_backward(true) (the training-step
// expansion, eager/expand_training_step.h, records the ops the backward rules
// run). Tensors are known by value (GlobalTensor::value_id), so a detached
// or redistributed handle is the tensor it came from. The recorder keeps
// the tensors it saw alive.
#ifndef EAGER_PROGRAM_RECORDER_H_
#define EAGER_PROGRAM_RECORDER_H_

#include <string>
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "absl/types/span.h"
#include "oneflow_sbp/values/attr_value.h"
#include "eager/global_tensor.h"
#include "oneflow_sbp/rule_api/op_call.h"

namespace oneflow_sbp::eager {

class ProgramRecorder {
 public:
  struct Tensor {
    std::string name;
    TensorDesc desc;
    NdSbp nd_sbp;
    // A leaf that requires grad.
    bool parameter = false;
    // Defined by a recorded op (else a leaf).
    bool produced = false;
  };
  struct Op {
    std::string type;
    std::vector<std::string> inputs;
    std::vector<std::string> outputs;
    AttrMap attrs;
  };

  explicit ProgramRecorder(Placement placement) : placement_(std::move(placement)) {}

  // Names a tensor before it is used (parameters, inputs).
  void Name(const GlobalTensor& t, std::string name);
  void Record(const OpCall& call, absl::Span<const GlobalTensor> inputs,
              absl::Span<const GlobalTensor> outputs);

  // Record the calls made while Backward runs too.
  void set_record_backward(bool on) { record_backward_ = on; }
  bool record_backward() const { return record_backward_; }
  // The recorded name of `t`'s value, or nullptr if no recorded op read
  // or defined it.
  const std::string* FindName(const GlobalTensor& t) const;

  const Placement& placement() const { return placement_; }
  // In first-use order.
  const std::vector<Tensor>& tensors() const { return tensors_; }
  const std::vector<Op>& ops() const { return ops_; }

 private:
  const std::string& NameOf(const GlobalTensor& t, bool produced, const std::string& fallback);

  Placement placement_;
  absl::flat_hash_map<const void*, std::string> names_;
  absl::flat_hash_map<const void*, int> index_;
  std::vector<Tensor> tensors_;
  std::vector<Op> ops_;
  std::vector<GlobalTensor> keep_alive_;
  bool record_backward_ = false;
};

}  // namespace oneflow_sbp::eager

#endif  // EAGER_PROGRAM_RECORDER_H_
