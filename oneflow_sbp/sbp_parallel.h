// SbpParallel: the layout of a tensor along one mesh axis.
//
//   S(k)  each rank of the axis holds a contiguous balanced slice of dim k
//   B     each rank holds the whole tensor
//   P     each rank holds an addend; the logical value is their sum
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
// reshape measure uses (SPEC.md §6.3).
#ifndef ONEFLOW_SBP_SBP_PARALLEL_H_
#define ONEFLOW_SBP_SBP_PARALLEL_H_

#include <cstdint>
#include <string>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"

namespace oneflow_sbp {

class SbpParallel {
 public:
  // Largest split axis the one-byte encoding holds. Tensor ranks are capped
  // lower (Shape::kMaxRank), so every axis < rank fits.
  static constexpr int kMaxSplitAxis = 255 - 3;

  // Unset.
  constexpr SbpParallel() : code_(kUnsetCode) {}

  static constexpr SbpParallel Broadcast() { return SbpParallel(kBroadcastCode); }
  static constexpr SbpParallel PartialSum() { return SbpParallel(kPartialSumCode); }
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
  // (optionally prefixed `torch.distributed.tensor.`). A partial of another
  // reduction (`Partial("max")`) is kInvalidArgument.
  static absl::StatusOr<SbpParallel> Parse(absl::string_view text);

  bool is_unset() const { return code_ == kUnsetCode; }
  bool is_broadcast() const { return code_ == kBroadcastCode; }
  bool is_partial_sum() const { return code_ == kPartialSumCode; }
  bool is_split() const { return code_ >= kFirstSplitCode; }
  // Requires is_split().
  int split_axis() const;

  // The encoding described above; stable, used in hashes and sort keys.
  uint8_t code() const { return code_; }
  static SbpParallel FromCode(uint8_t code) { return SbpParallel(code); }

  // "B", "P", "S(1)"; "unset" for the unset value.
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

  explicit constexpr SbpParallel(uint8_t code) : code_(code) {}

  uint8_t code_;
};

}  // namespace oneflow_sbp

#endif  // ONEFLOW_SBP_SBP_PARALLEL_H_
