// GoogleMock matchers for absl::Status and absl::StatusOr<T>, shared by
// every test (docs/STYLE.md of the project: errors are values, and a test of
// a failure path checks the code and the message together):
//
//   EXPECT_THAT(registry.Register(def), IsOk());
//   EXPECT_THAT(Parse("S(-1)"), StatusIs(absl::StatusCode::kInvalidArgument));
//   EXPECT_THAT(Parse("S(-1)"),
//               StatusIs(absl::StatusCode::kInvalidArgument, HasSubstr("axis")));
//   EXPECT_THAT(Shape::Make({2, 3}), IsOkAndHolds(Property(&Shape::rank, 2)));
//
// (with `using ::oneflow_sbp::matchers::StatusIs;` and the like). Each works
// on a Status and on any StatusOr<T>; a mismatch prints the
// whole status (code and message), so a failing test says what came back.
// tests/support/status_matchers_test.cc holds the examples above, compiled and run.
#ifndef TESTS_SUPPORT_STATUS_MATCHERS_H_
#define TESTS_SUPPORT_STATUS_MATCHERS_H_

#include <ostream>
#include <string>
#include <type_traits>
#include <utility>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "gmock/gmock.h"

namespace oneflow_sbp::matchers {
namespace internal {

inline const absl::Status& StatusOf(const absl::Status& s) { return s; }
template <typename T>
const absl::Status& StatusOf(const absl::StatusOr<T>& s) {
  return s.status();
}

// StatusIs(code[, message matcher]) for any status-like type.
class StatusIsMatcher {
 public:
  StatusIsMatcher(absl::StatusCode code, ::testing::Matcher<const std::string&> message)
      : code_(code), message_(std::move(message)) {}

  // To a matcher of Status, StatusOr<T>, or a const reference to either.
  template <typename StatusLike>
  operator ::testing::Matcher<StatusLike>() const {  // NOLINT: implicit by design
    return ::testing::MakeMatcher(new Impl<StatusLike>(code_, message_));
  }

 private:
  template <typename StatusLike>
  class Impl : public ::testing::MatcherInterface<StatusLike> {
   public:
    Impl(absl::StatusCode code, ::testing::Matcher<const std::string&> message)
        : code_(code), message_(std::move(message)) {}

    bool MatchAndExplain(StatusLike value,
                         ::testing::MatchResultListener* listener) const override {
      const absl::Status& s = StatusOf(value);
      *listener << "which is " << s;
      if (s.code() != code_) return false;
      const std::string message(s.message());
      ::testing::StringMatchResultListener inner;
      if (message_.MatchAndExplain(message, &inner)) return true;
      if (!inner.str().empty()) *listener << ", whose message " << inner.str();
      return false;
    }
    void DescribeTo(std::ostream* os) const override {
      *os << "has code " << absl::StatusCodeToString(code_) << " and a message that ";
      message_.DescribeTo(os);
    }
    void DescribeNegationTo(std::ostream* os) const override {
      *os << "does not have code " << absl::StatusCodeToString(code_)
          << " or has a message that ";
      message_.DescribeNegationTo(os);
    }

   private:
    absl::StatusCode code_;
    ::testing::Matcher<const std::string&> message_;
  };

  absl::StatusCode code_;
  ::testing::Matcher<const std::string&> message_;
};

// IsOkAndHolds(m) for any StatusOr<T>.
template <typename InnerMatcher>
class IsOkAndHoldsMatcher {
 public:
  explicit IsOkAndHoldsMatcher(InnerMatcher inner) : inner_(std::move(inner)) {}

  // To a matcher of StatusOr<T> or a const reference to one.
  template <typename StatusOrT>
  operator ::testing::Matcher<StatusOrT>() const {  // NOLINT: implicit by design
    using T = typename std::decay_t<StatusOrT>::value_type;
    return ::testing::MakeMatcher(
        new Impl<StatusOrT>(::testing::SafeMatcherCast<const T&>(inner_)));
  }

 private:
  template <typename StatusOrT>
  class Impl : public ::testing::MatcherInterface<StatusOrT> {
    using T = typename std::decay_t<StatusOrT>::value_type;

   public:
    explicit Impl(::testing::Matcher<const T&> inner) : inner_(std::move(inner)) {}

    bool MatchAndExplain(StatusOrT value,
                         ::testing::MatchResultListener* listener) const override {
      if (!value.ok()) {
        *listener << "which is " << value.status();
        return false;
      }
      ::testing::StringMatchResultListener inner;
      const bool matched = inner_.MatchAndExplain(*value, &inner);
      if (!inner.str().empty()) *listener << "which holds a value " << inner.str();
      return matched;
    }
    void DescribeTo(std::ostream* os) const override {
      *os << "is OK and holds a value that ";
      inner_.DescribeTo(os);
    }
    void DescribeNegationTo(std::ostream* os) const override {
      *os << "is not OK or holds a value that ";
      inner_.DescribeNegationTo(os);
    }

   private:
    ::testing::Matcher<const T&> inner_;
  };

  InnerMatcher inner_;
};

}  // namespace internal

// The status (or the StatusOr's status) has `code`, and its message matches
// `message` (anything by default).
inline internal::StatusIsMatcher StatusIs(
    absl::StatusCode code, ::testing::Matcher<const std::string&> message = ::testing::_) {
  return internal::StatusIsMatcher(code, std::move(message));
}

// The status is OK (for a StatusOr: it holds a value).
inline internal::StatusIsMatcher IsOk() { return StatusIs(absl::StatusCode::kOk); }

// The StatusOr is OK and its value matches `inner`.
template <typename InnerMatcher>
internal::IsOkAndHoldsMatcher<InnerMatcher> IsOkAndHolds(InnerMatcher inner) {
  return internal::IsOkAndHoldsMatcher<InnerMatcher>(std::move(inner));
}

}  // namespace oneflow_sbp::matchers

#endif  // TESTS_SUPPORT_STATUS_MATCHERS_H_
