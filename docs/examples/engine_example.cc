// The Engine example of engine/engine.h and docs/ENGINE.md, as a
// program: the lines between the markers are the example, word for word
// (//docs/examples:examples_in_sync_test compares them), and this target
// builds and runs it, so a stale example fails the build or the test.
#include <iostream>
#include <memory>

#include "absl/status/status.h"
#include "boxing/boxing_plan.h"
#include "engine/engine.h"
#include "oneflow_sbp/rule_api/sbp_signature.h"
#include "oneflow_sbp/values/status_macros.h"

namespace oneflow_sbp {

absl::Status Run() {
  // [example]
  absl::StatusOr<std::unique_ptr<engine::Engine>> engine = engine::Engine::Create();  // the built-in ops
  if (!engine.ok()) return engine.status();
  InferRequest req;
  OFS_ASSIGN_OR_RETURN(req.op, (*engine)->MakeCall("matmul", /*num_inputs=*/2));
  OFS_ASSIGN_OR_RETURN(req.placement, Placement::Parse("cpu:0-3 [2,2]"));
  OFS_ASSIGN_OR_RETURN(const TensorDesc a, TensorDesc::Parse("f32[64,32]"));
  OFS_ASSIGN_OR_RETURN(const TensorDesc b, TensorDesc::Parse("f32[32,48]"));
  OFS_ASSIGN_OR_RETURN(const NdSbp row, NdSbp::Parse("(S(0), B)"));
  OFS_ASSIGN_OR_RETURN(const NdSbp col, NdSbp::Parse("[Replicate(), Shard(1)]"));
  req.inputs = {InferInput(a, row), InferInput(b, col)};
  req.cost.policy = PolicyName::Planned();  // or leave the default "oneflow"
  OFS_ASSIGN_OR_RETURN(std::shared_ptr<const InferResult> result, (*engine)->Infer(req));
  std::cout << SignatureToString(*req.op, result->signature) << "\n";
  OFS_ASSIGN_OR_RETURN(std::shared_ptr<const boxing::BoxingPlan> plan,
                       (*engine)->Plan({a.shape, a.dtype, req.placement, row,
                                        req.placement, *NdSbp::Parse("(B, S(0))")}));
  std::cout << plan->Summary() << "\n";
  // [end example]
  // An unknown op is a status, never an abort.
  absl::StatusOr<std::shared_ptr<const OpCall>> typo = (*engine)->MakeCall("matmull", 2);
  if (typo.ok() || typo.status().code() != absl::StatusCode::kNotFound) {
    return absl::InternalError("MakeCall(\"matmull\") should be kNotFound");
  }
  std::cout << typo.status().message() << "\n";
  return absl::OkStatus();
}

}  // namespace oneflow_sbp

int main() {
  const absl::Status s = oneflow_sbp::Run();
  if (!s.ok()) {
    std::cerr << "engine_example: " << s << "\n";
    return 1;
  }
  return 0;
}
