// Copy cost: what it costs to turn an input's producer layout into the
// layout a candidate signature asks for, under OneFlow's eager formulas
// (SPEC.md §2 and §4), reproduced exactly so that users coming from OneFlow
// get the same choices. The boxing planner prices real plans instead
// (planned_selection.h).
//
// Example:
//   absl::StatusOr<CopyCost> c = OneFlowEagerNdCost(
//       NdSbp{P, P}, NdSbp{B, B}, /*in_hierarchy=*/{2, 3}, /*out_hierarchy=*/{2, 3},
//       /*same_devices=*/true, Shape{12, 10}, /*bytes=*/480,
//       /*requires_same_sbp=*/false, PartialPenalty::kProportional);
//   c->value();   // 4800: (P,P)->(B,B) reduces to P->B on [6], 2·T·(6-1)
//
// A cost is a double or explicitly "unsupported" (CopyCost): OneFlow sums
// FLT_MAX into totals to mean "may not happen"; here unsupported absorbs
// sums and never wins, and FLT_MAX appears only where a number must be
// printed for compatibility.
#ifndef ONEFLOW_SBP_INFERENCE_COPY_COST_H_
#define ONEFLOW_SBP_INFERENCE_COPY_COST_H_

#include <cfloat>
#include <cstdint>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "absl/types/span.h"
#include "oneflow_sbp/values/nd_sbp.h"
#include "oneflow_sbp/values/shape.h"

namespace oneflow_sbp {

// OneFlow's ONEFLOW_PENALTY_FOR_PARTIAL_IN_CONSUMER_POLICY, passed
// explicitly instead of read from the environment. The numbers are
// OneFlow's (1, 2; OneFlow maps every other value to FLT_MAX, which we name
// kForbidden and number 3).
enum class PartialPenalty : uint8_t {
  kConstant = 1,      // a consumer that wants P pays 1.0
  kProportional = 2,  // ... pays 4·T·(np+nc) (OneFlow's default)
  kForbidden = 3,     // turning an input into P is unsupported
};

// "constant", "proportional", "forbidden".
absl::string_view PartialPenaltyName(PartialPenalty penalty);
// 1, 2 or 3 (the proto and CLI numbering); anything else is kInvalidArgument.
absl::StatusOr<PartialPenalty> PartialPenaltyFromNumber(int64_t number);

class CopyCost {
 public:
  constexpr CopyCost() : value_(0), supported_(true) {}
  constexpr explicit CopyCost(double value) : value_(value), supported_(true) {}
  static constexpr CopyCost Unsupported() { return CopyCost(kUnsupportedTag{}); }

  bool supported() const { return supported_; }
  // The cost; 0 for an unsupported one (check supported() first).
  double value() const { return supported_ ? value_ : 0; }
  // OneFlow's sentinel for printing: the value, or FLT_MAX if unsupported.
  double ValueOrFltMax() const { return supported_ ? value_ : static_cast<double>(FLT_MAX); }

  CopyCost& operator+=(CopyCost other) {
    supported_ = supported_ && other.supported_;
    value_ = supported_ ? value_ + other.value_ : 0;
    return *this;
  }
  friend CopyCost operator+(CopyCost a, CopyCost b) { return a += b; }
  friend bool operator==(CopyCost a, CopyCost b) {
    return a.supported_ == b.supported_ && a.value() == b.value();
  }
  friend bool operator!=(CopyCost a, CopyCost b) { return !(a == b); }

 private:
  struct kUnsupportedTag {};
  constexpr explicit CopyCost(kUnsupportedTag) : value_(0), supported_(false) {}
  double value_;
  bool supported_;
};

// OneFlow's largest valid cost, 0.8·FLT_MAX: its N-D selection starts from
// it, so a candidate must cost less to be chosen at all.
inline constexpr double kMaxValidCost = 0.8 * static_cast<double>(FLT_MAX);

// --- 1-D selection cost (SPEC.md §2) ---------------------------------------
// equal 0; anything -> P 2^63; B -> S INT32_MAX; other changes T. The
// device count plays no role (OneFlow's crude 1-D cost, reproduced).
double OneFlow1DCopyCost(SbpParallel producer, SbpParallel consumer, double bytes);

// --- Eager N-D cost (SPEC.md §4) --------------------------------------------
// Penalty(T, np, nc) for a consumer that wants P.
CopyCost PartialConsumerPenalty(double bytes, int64_t np, int64_t nc, PartialPenalty penalty);

// c1: per-axis cost of a -> b (SPEC.md §4.2). Unset SBPs are rejected by
// callers.
CopyCost OneFlowAxisCost(SbpParallel a, SbpParallel b, double bytes, bool same_devices,
                         int64_t np, int64_t nc, PartialPenalty penalty);

// OneFlow's ComputeEagerCopyCostBetweenNdSbp for producer `in` on
// `in_hierarchy` and consumer `out` on `out_hierarchy` (SPEC.md §4.4).
// `requires_same_sbp`: the input may not be boxed (mutable args), giving
// Unsupported unless the reduced layouts are equal. kInvalidArgument for an
// empty nd_sbp or an unset entry.
absl::StatusOr<CopyCost> OneFlowEagerNdCost(const NdSbp& in, const NdSbp& out,
                                            absl::Span<const int64_t> in_hierarchy,
                                            absl::Span<const int64_t> out_hierarchy,
                                            bool same_devices, const Shape& shape,
                                            double bytes, bool requires_same_sbp,
                                            PartialPenalty penalty);

}  // namespace oneflow_sbp

#endif  // ONEFLOW_SBP_INFERENCE_COPY_COST_H_
