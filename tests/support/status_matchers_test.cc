// The shared status matchers (status_matchers.h): the header's examples, and
// that each one fails, with the status in its explanation, when it should.
#include "tests/support/status_matchers.h"

#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/str_cat.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "oneflow_sbp/values/sbp_parallel.h"
#include "oneflow_sbp/values/shape.h"

namespace oneflow_sbp {
namespace {

using ::oneflow_sbp::matchers::IsOk;
using ::oneflow_sbp::matchers::IsOkAndHolds;
using ::oneflow_sbp::matchers::StatusIs;
using ::testing::HasSubstr;
using ::testing::Not;
using ::testing::Property;

absl::StatusOr<int> Half(int x) {
  if (x % 2 != 0) return absl::InvalidArgumentError(absl::StrCat(x, " is odd"));
  return x / 2;
}

// What a matcher says about `value` when it does not match.
template <typename M, typename V>
std::string Explain(const M& matcher, const V& value) {
  ::testing::StringMatchResultListener listener;
  EXPECT_FALSE(::testing::ExplainMatchResult(matcher, value, &listener));
  return listener.str();
}

TEST(StatusMatchers, TheHeadersExamples) {
  EXPECT_THAT(absl::OkStatus(), IsOk());
  EXPECT_THAT(SbpParallel::Parse("S(-1)"), StatusIs(absl::StatusCode::kInvalidArgument));
  EXPECT_THAT(Shape::Make({2, 3}), IsOkAndHolds(Property(&Shape::rank, 2)));
  EXPECT_THAT(Half(4), IsOkAndHolds(2));
  EXPECT_THAT(Half(3), StatusIs(absl::StatusCode::kInvalidArgument, HasSubstr("odd")));
}

TEST(StatusMatchers, EachFailsWhenItShouldAndSaysWhatCameBack) {
  EXPECT_THAT(Half(3), Not(IsOk()));
  EXPECT_THAT(Half(4), Not(StatusIs(absl::StatusCode::kInvalidArgument)));
  EXPECT_THAT(Half(3), Not(StatusIs(absl::StatusCode::kInvalidArgument, HasSubstr("even"))));
  EXPECT_THAT(Half(3), Not(StatusIs(absl::StatusCode::kNotFound, HasSubstr("odd"))));
  EXPECT_THAT(Half(4), Not(IsOkAndHolds(3)));
  EXPECT_THAT(Half(3), Not(IsOkAndHolds(::testing::_)));

  EXPECT_THAT(Explain(StatusIs(absl::StatusCode::kNotFound), Half(3)),
              HasSubstr("INVALID_ARGUMENT: 3 is odd"));
  EXPECT_THAT(Explain(IsOkAndHolds(2), Half(3)), HasSubstr("3 is odd"));
  EXPECT_THAT(Explain(IsOk(), absl::NotFoundError("no file 'x'")), HasSubstr("no file 'x'"));
  const std::string described = ::testing::DescribeMatcher<absl::Status>(
      StatusIs(absl::StatusCode::kDataLoss, HasSubstr("crc")));
  EXPECT_THAT(described, HasSubstr("DATA_LOSS"));
  EXPECT_THAT(described, HasSubstr("crc"));
}

TEST(StatusMatchers, WorkOnContainersOfStatuses) {
  const std::vector<absl::Status> per_rank = {absl::AbortedError("another rank failed"),
                                              absl::AbortedError("another rank failed")};
  EXPECT_THAT(per_rank, ::testing::Each(StatusIs(absl::StatusCode::kAborted)));
}

}  // namespace
}  // namespace oneflow_sbp
