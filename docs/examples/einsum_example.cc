// The einsum example of docs/OPS.md, as a program: a custom op from one
// einsum spec, registered into a private registry and inferred by an
// Engine. The lines between the markers are the example, word for word
// (//docs/examples:examples_in_sync_test).
#include <iostream>
#include <memory>

#include "absl/status/status.h"
#include "engine/engine.h"
#include "oneflow_sbp/rule_api/op_registry.h"
#include "oneflow_sbp/rule_api/sbp_signature.h"
#include "oneflow_sbp/values/status_macros.h"
#include "ops/einsum_rule.h"

namespace oneflow_sbp {

absl::Status Run() {
  OpRegistry registry;
  // [example]
  OFS_ASSIGN_OR_RETURN(const OpDefBuilder bilinear, ops::EinsumOp("bilinear", "bi,ij,bj->b"));
  OFS_RETURN_IF_ERROR(registry.Register(bilinear));  // in_0, in_1, in_2 -> out_0
  // [end example]
  engine::Engine::Options options;
  options.registry = engine::Engine::Options::Borrow(registry);
  OFS_ASSIGN_OR_RETURN(std::unique_ptr<engine::Engine> engine, engine::Engine::Create(std::move(options)));
  InferRequest req;
  OFS_ASSIGN_OR_RETURN(req.op, engine->MakeCall("bilinear", 3));
  OFS_ASSIGN_OR_RETURN(req.placement, Placement::Parse("cpu:0-3"));
  OFS_ASSIGN_OR_RETURN(const TensorDesc x, TensorDesc::Parse("f32[64,16]"));
  OFS_ASSIGN_OR_RETURN(const TensorDesc w, TensorDesc::Parse("f32[16,16]"));
  OFS_ASSIGN_OR_RETURN(const NdSbp data, NdSbp::Parse("S(0)"));
  OFS_ASSIGN_OR_RETURN(const NdSbp replicated, NdSbp::Parse("B"));
  req.inputs = {InferInput(x, data), InferInput(w, replicated), InferInput(x, data)};
  OFS_ASSIGN_OR_RETURN(std::shared_ptr<const InferResult> result, engine->Infer(req));
  const std::string chosen = SignatureToString(*req.op, result->signature);
  std::cout << chosen << "\n";
  if (chosen != "in_0:S(0) in_1:B in_2:S(0) -> out_0:S(0)") {
    return absl::InternalError("bilinear: expected the data-parallel signature");
  }
  return absl::OkStatus();
}

}  // namespace oneflow_sbp

int main() {
  const absl::Status s = oneflow_sbp::Run();
  if (!s.ok()) {
    std::cerr << "einsum_example: " << s << "\n";
    return 1;
  }
  return 0;
}
