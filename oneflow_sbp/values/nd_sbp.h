// NdSbp: one SbpParallel per mesh axis of a placement's hierarchy.
//
// Example:
//   absl::StatusOr<NdSbp> nd = NdSbp::Parse("(S(0), B)");  // or "S(0),B"
//   nd->size();          // 2
//   (*nd)[0];            // S(0)
//   nd->ToString();      // "(S(0), B)"
//   nd->ToLongString();  // "S(0),B"
//
// A small value: up to kMaxAxes one-byte entries packed into a uint64 plus a
// length, so copy, equality and hashing are a couple of integer operations.
// Invariant: entries at positions >= size() are zero, which makes the packed
// word a canonical key. Whether the length matches a placement, or split
// axes fit a shape, is checked where both are known (ValidateNdSbp in
// nd_sbp_validation.h).
#ifndef ONEFLOW_SBP_VALUES_ND_SBP_H_
#define ONEFLOW_SBP_VALUES_ND_SBP_H_

#include <cstdint>
#include <initializer_list>
#include <optional>
#include <string>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "absl/types/span.h"
#include "oneflow_sbp/values/sbp_parallel.h"

namespace oneflow_sbp {

class NdSbp {
 public:
  // Mesh rank limit (hierarchies of up to 8 axes).
  static constexpr int kMaxAxes = 8;

  NdSbp() = default;
  // For literals in code; aborts if more than kMaxAxes entries.
  NdSbp(std::initializer_list<SbpParallel> sbps);
  // `count` copies of `sbp`, e.g. NdSbp::Repeat(SbpParallel::Broadcast(), 2)
  // is (B, B). Requires count <= kMaxAxes.
  static NdSbp Repeat(SbpParallel sbp, int count);

  // kInvalidArgument if more than kMaxAxes entries.
  static absl::StatusOr<NdSbp> Make(absl::Span<const SbpParallel> sbps);

  // "(S(0), B)", "(S(0),B)", "S(0),B", "S(0)" and "(S(0))"; a Python list
  // "[S(0), B]" too, and every entry in any spelling SbpParallel::Parse
  // reads ("[Shard(0), Replicate()]", "(flow.sbp.split(0),
  // flow.sbp.broadcast)"). Empty or
  // malformed text, an entry such as "S(-1)", or more than kMaxAxes entries
  // are kInvalidArgument naming the text.
  static absl::StatusOr<NdSbp> Parse(absl::string_view text);

  int size() const { return size_; }
  bool empty() const { return size_ == 0; }
  SbpParallel operator[](int i) const {
    return SbpParallel::FromCode(static_cast<uint8_t>(packed_ >> (8 * i)));
  }
  // Requires i < size(). Inline: candidate expansion builds thousands of
  // these per cold inference.
  void set(int i, SbpParallel sbp) {
    if (i < 0 || i >= size_) BadIndex(i);
    const int shift = 8 * i;
    packed_ = (packed_ & ~(uint64_t{0xff} << shift)) | (uint64_t{sbp.code()} << shift);
  }
  // Requires size() < kMaxAxes.
  void push_back(SbpParallel sbp) {
    if (size_ >= kMaxAxes) BadIndex(size_);
    ++size_;
    set(size_ - 1, sbp);
  }

  bool all_broadcast() const;
  // Any P (sum) entry: OneFlow's partial.
  bool any_partial_sum() const;
  // Any partial entry of any kind (sum, max, min).
  bool any_partial() const;
  // The kind of the first partial entry, or nullopt when there is none.
  // Valid layouts (ValidateNdSbp) never mix kinds, so it is the only one.
  std::optional<PartialKind> partial_kind() const;
  // True when partial entries of two kinds meet ((P(max), P)): an
  // order-dependent value that no collective produces.
  bool mixes_partial_kinds() const;
  bool any_unset() const;

  // "(S(0), B)"; "()" when empty.
  std::string ToString() const;
  // "S(0),B": OneFlow's long form.
  std::string ToLongString() const;

  // The packed entries (byte i = entry i's code). With size(), a canonical
  // key; lexicographic order on (size, entries) is operator<.
  uint64_t packed() const { return packed_; }

  friend bool operator==(const NdSbp& a, const NdSbp& b) {
    return a.packed_ == b.packed_ && a.size_ == b.size_;
  }
  friend bool operator!=(const NdSbp& a, const NdSbp& b) { return !(a == b); }
  // Shorter first, then entry by entry from mesh axis 0 (B < P < S(0) < ...).
  friend bool operator<(const NdSbp& a, const NdSbp& b);

  template <typename H>
  friend H AbslHashValue(H h, const NdSbp& nd) {
    return H::combine(std::move(h), nd.packed_, nd.size_);
  }

 private:
  // Aborts: an index outside the entries is a bug of the caller, never input.
  [[noreturn]] void BadIndex(int i) const;

  uint64_t packed_ = 0;
  uint8_t size_ = 0;
};

}  // namespace oneflow_sbp

#endif  // ONEFLOW_SBP_VALUES_ND_SBP_H_
