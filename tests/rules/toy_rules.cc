#include "tests/rules/toy_rules.h"

namespace oneflow_sbp::testing::toy {

absl::Status SameAsInput(ShapeContext& ctx) {
  ctx.set_output("y", 0, ctx.input("x"));
  return absl::OkStatus();
}

absl::Status SplitEveryAxis(SbpContext& ctx) { return SplitForEachAxis(ctx); }

}  // namespace oneflow_sbp::testing::toy
