// Parse-or-fail helpers for tests: a value from its compact string, with a
// test failure (not an abort) when the string is bad.
#ifndef TESTS_SUPPORT_VALUE_TEST_UTIL_H_
#define TESTS_SUPPORT_VALUE_TEST_UTIL_H_

#include <string>

#include "gtest/gtest.h"
#include "oneflow_sbp/values/nd_sbp.h"
#include "oneflow_sbp/values/placement.h"

namespace oneflow_sbp::testing {

inline NdSbp Nd(const std::string& text) {
  absl::StatusOr<NdSbp> nd = NdSbp::Parse(text);
  EXPECT_TRUE(nd.ok()) << text << ": " << nd.status();
  return nd.ok() ? *nd : NdSbp();
}

inline Placement P(const std::string& text) {
  absl::StatusOr<Placement> p = Placement::Parse(text);
  EXPECT_TRUE(p.ok()) << text << ": " << p.status();
  return p.ok() ? *p : Placement();
}

}  // namespace oneflow_sbp::testing

#endif  // TESTS_SUPPORT_VALUE_TEST_UTIL_H_
