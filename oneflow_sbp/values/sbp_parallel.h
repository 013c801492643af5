// SbpParallel: the layout of a tensor along one mesh axis.
//
//   S(k)  each rank of the axis holds a contiguous balanced slice of dim k
//   B     each rank holds the whole tensor
//   P     each rank holds an addend; the logical value is their sum
//   P(max) each rank holds a candidate; the logical value is their
//         elementwise maximum (P(min): minimum). OneFlow has no such
//         layouts: only the `planned` policy's extended candidates make
//         them; the `oneflow` policy never does (docs/ENGINE.md).
//   unset no layout given (only meaningful in constraints)
//
// Example:
//   SbpParallel s = SbpParallel::Split(1);
//   s.ToString();                        // "S(1)"
//   *SbpParallel::Parse("B") == SbpParallel::Broadcast();
//
// One byte, trivially copyable, hashed and compared as an integer: the
// engine compares and hashes these millions of times. The byte is
// code(unset)=0, code(B)=1, code(P)=2, code(S(k))=3+k, which is also the
// natural total order (B < P < S(0) < S(1) < ...), the same order OneFlow's
// reshape measure uses (SPEC.md §6.3). P(min)=254 and P(max)=255 sit above
// every split, so OneFlow's layouts keep their codes and their order.
#ifndef ONEFLOW_SBP_VALUES_SBP_PARALLEL_H_
#define ONEFLOW_SBP_VALUES_SBP_PARALLEL_H_

#include <cstdint>
#include <string>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"

namespace oneflow_sbp {

// How the addends of a partial layout combine into the logical value.
enum class PartialKind : uint8_t { kSum, kMax, kMin };

// "sum", "max", "min".
const char* PartialKindName(PartialKind kind);

class SbpParallel {
 public:
  // Largest split axis the one-byte encoding holds. Tensor ranks are capped
  // lower (Shape::kMaxRank), so every axis < rank fits.
  static constexpr int kMaxSplitAxis = 253 - 3;

  // Unset.
  constexpr SbpParallel() : code_(kUnsetCode) {}

  static constexpr SbpParallel Broadcast() { return SbpParallel(kBroadcastCode); }
  static constexpr SbpParallel PartialSum() { return SbpParallel(kPartialSumCode); }
  static constexpr SbpParallel PartialMax() { return SbpParallel(kPartialMaxCode); }
  static constexpr SbpParallel PartialMin() { return SbpParallel(kPartialMinCode); }
  static constexpr SbpParallel Partial(PartialKind kind) {
    return kind == PartialKind::kSum   ? PartialSum()
           : kind == PartialKind::kMax ? PartialMax()
                                       : PartialMin();
  }
  // Requires 0 <= axis <= kMaxSplitAxis (internal invariant; user-given axes
  // go through MakeSplit or Parse).
  static SbpParallel Split(int axis);
  // kInvalidArgument for a negative or too large axis.
  static absl::StatusOr<SbpParallel> MakeSplit(int64_t axis);

  // "B", "P", "S(<digits>)", surrounding whitespace ignored. "S(-1)", "S(x)",
  // "s(0)" and the like are kInvalidArgument with the offending text.
  // Users' spellings are read too, and print as ours: OneFlow's
  // `broadcast`, `partial_sum`, `split(0)`, `split(dim=0)` (optionally
  // prefixed `flow.sbp.`, `oneflow.sbp.` or `sbp.`) and DTensor's
  // `Replicate()`, `Partial()`, `Partial("sum")`, `Shard(0)`, `Shard(dim=0)`
  // (optionally prefixed `torch.distributed.tensor.`). The other partials:
  // `P(max)`, `P(min)` (`P(sum)` reads as P), OneFlow-style `partial_max`,
  // `partial_min`, DTensor's `Partial("max")`, `Partial(reduce_op="min")`.
  // Any other reduction (`Partial("avg")`) is kInvalidArgument.
  static absl::StatusOr<SbpParallel> Parse(absl::string_view text);

  bool is_unset() const { return code_ == kUnsetCode; }
  bool is_broadcast() const { return code_ == kBroadcastCode; }
  // Only the sum partial, OneFlow's P.
  bool is_partial_sum() const { return code_ == kPartialSumCode; }
  bool is_partial_max() const { return code_ == kPartialMaxCode; }
  bool is_partial_min() const { return code_ == kPartialMinCode; }
  // Any partial: sum, max or min.
  bool is_partial() const {
    return code_ == kPartialSumCode || code_ >= kPartialMinCode;
  }
  // Requires is_partial().
  PartialKind partial_kind() const;
  bool is_split() const { return code_ >= kFirstSplitCode && code_ < kPartialMinCode; }
  // Requires is_split(). Inline: shape filters and costs ask for it per
  // candidate.
  int split_axis() const {
    if (!is_split()) NotASplit();
    return code_ - kFirstSplitCode;
  }

  // The encoding described above; stable, used in hashes and sort keys.
  uint8_t code() const { return code_; }
  static SbpParallel FromCode(uint8_t code) { return SbpParallel(code); }

  // "B", "P", "P(max)", "P(min)", "S(1)"; "unset" for the unset value.
  std::string ToString() const;

  friend constexpr bool operator==(SbpParallel a, SbpParallel b) {
    return a.code_ == b.code_;
  }
  friend constexpr bool operator!=(SbpParallel a, SbpParallel b) {
    return a.code_ != b.code_;
  }
  friend constexpr bool operator<(SbpParallel a, SbpParallel b) {
    return a.code_ < b.code_;
  }
  template <typename H>
  friend H AbslHashValue(H h, SbpParallel s) {
    return H::combine(std::move(h), s.code_);
  }

 private:
  static constexpr uint8_t kUnsetCode = 0;
  static constexpr uint8_t kBroadcastCode = 1;
  static constexpr uint8_t kPartialSumCode = 2;
  static constexpr uint8_t kFirstSplitCode = 3;
  static constexpr uint8_t kPartialMinCode = 254;
  static constexpr uint8_t kPartialMaxCode = 255;
  static_assert(kFirstSplitCode + kMaxSplitAxis < kPartialMinCode);

  explicit constexpr SbpParallel(uint8_t code) : code_(code) {}
  // Aborts: asking a non-split for its axis is a bug of the caller.
  [[noreturn]] void NotASplit() const;

  uint8_t code_;
};

}  // namespace oneflow_sbp

#endif  // ONEFLOW_SBP_VALUES_SBP_PARALLEL_H_
