// `sbp verify` at its default settings over the whole catalog: every op,
// every 1-D candidate on [2] and [3], every kept N-D candidate on [2,2] and
// [2,3], a sample on [2,2,2], P(max)/P(min) candidates included. About 4 s
// (opt); tagged sweep, run by .ci/run's sweep stage.
#include <iostream>

#include "gtest/gtest.h"
#include "ops/builtin_ops.h"
#include "kernels/verify/verifier.h"

namespace oneflow_sbp::kernels {
namespace {

// The whole catalog at the default settings (`sbp verify`), tag sweep.
TEST(VerifyCatalogSweep, EveryOpPasses) {
  absl::StatusOr<VerifyReport> r = RunVerify(ops::BuiltinOpRegistry(), VerifyOptions());
  ASSERT_TRUE(r.ok()) << r.status();
  std::cout << VerifyReportToText(*r);
  EXPECT_TRUE(r->ok()) << "see the report above";
}

}  // namespace
}  // namespace oneflow_sbp::kernels
