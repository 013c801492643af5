// The custom-op example of docs/ENGINE.md, as a program: an op defined and
// registered from outside the library, then inferred like a built-in. The
// lines between the markers are the example, word for word
// (//docs/examples:examples_in_sync_test).
#include <iostream>
#include <memory>

#include "absl/status/status.h"
#include "absl/strings/str_cat.h"
#include "engine/engine.h"
#include "oneflow_sbp/rule_api/op_registry.h"
#include "oneflow_sbp/rule_api/sbp_context.h"
#include "oneflow_sbp/rule_api/sbp_signature.h"
#include "oneflow_sbp/values/status_macros.h"

namespace oneflow_sbp {

// y[i, :] = x[i, :] * scale[i]
absl::Status RowScaleShape(ShapeContext& ctx) {
  const TensorDesc& x = ctx.input("x");
  const TensorDesc& scale = ctx.input("scale");
  if (x.shape.rank() != 2 || scale.shape.rank() != 1 || scale.shape.dim(0) != x.shape.dim(0)) {
    return absl::InvalidArgumentError(
        absl::StrCat("row_scale: x_0 ", x.ToString(), " and scale_0 ", scale.ToString(),
                     " do not fit"));
  }
  ctx.set_output("y", 0, x);
  return absl::OkStatus();
}

// [example]
OFS_REGISTER_OP(OpDefBuilder("row_scale")
                    .Input("x").Input("scale").Output("y")
                    .SetShapeFn(RowScaleShape)
                    .SetGetSbpFn([](SbpContext& ctx) {
                      ctx.NewBuilder().Split(OpArg{"x", 0}, 0)
                          .Split(OpArg{"scale", 0}, 0).Split(ctx.outputs(), 0).Build();
                      return absl::OkStatus();
                    }));
// [end example]

absl::Status Run() {
  OFS_ASSIGN_OR_RETURN(std::unique_ptr<engine::Engine> engine, engine::Engine::Create());
  InferRequest req;
  OFS_ASSIGN_OR_RETURN(req.op, engine->MakeCall("row_scale", 2));
  OFS_ASSIGN_OR_RETURN(req.placement, Placement::Parse("cpu:0-1"));
  OFS_ASSIGN_OR_RETURN(const TensorDesc x, TensorDesc::Parse("f32[8,4]"));
  OFS_ASSIGN_OR_RETURN(const TensorDesc scale, TensorDesc::Parse("f32[8]"));
  OFS_ASSIGN_OR_RETURN(const NdSbp split, NdSbp::Parse("split(0)"));
  req.inputs = {InferInput(x, split), InferInput(scale, split)};
  OFS_ASSIGN_OR_RETURN(std::shared_ptr<const InferResult> result, engine->Infer(req));
  const std::string chosen = SignatureToString(*req.op, result->signature);
  std::cout << chosen << "\n";
  if (chosen != "x_0:S(0) scale_0:S(0) -> y_0:S(0)") {
    return absl::InternalError("row_scale: expected the row split");
  }
  return absl::OkStatus();
}

}  // namespace oneflow_sbp

int main() {
  const absl::Status s = oneflow_sbp::Run();
  if (!s.ok()) {
    std::cerr << "custom_op_example: " << s << "\n";
    return 1;
  }
  return 0;
}
