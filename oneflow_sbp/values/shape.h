// Logical tensor shape: a small inline vector of positive extents.
//
// Example:
//   absl::StatusOr<Shape> s = Shape::Parse("[64, 32]");  // also "64,32"
//   s->rank();       // 2
//   s->elem_cnt();   // 2048
//   s->ToString();   // "[64,32]"
//
// Contract: every extent is >= 1 and the element count fits in int64; the
// checked factories (Make, Parse) enforce it and return kInvalidArgument
// naming the bad extent. Zero-size tensors are not supported by the engine
// (SPEC.md's "elem_cnt == 0" branches are therefore unreachable). A scalar
// is the rank-0 shape "[]" with elem_cnt 1. Rank is at most kMaxRank.
#ifndef ONEFLOW_SBP_VALUES_SHAPE_H_
#define ONEFLOW_SBP_VALUES_SHAPE_H_

#include <cstdint>
#include <initializer_list>
#include <string>

#include "absl/container/inlined_vector.h"
#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "absl/types/span.h"

namespace oneflow_sbp {

class Shape {
 public:
  // Tensor rank limit. Split axes are stored in one byte (sbp_parallel.h),
  // which leaves ample room above this.
  static constexpr int kMaxRank = 32;

  // The scalar shape [].
  Shape() = default;

  // For literals in code and tests; aborts on an invalid shape (an internal
  // invariant, not a user input path). User input goes through Make/Parse.
  Shape(std::initializer_list<int64_t> dims);

  static absl::StatusOr<Shape> Make(absl::Span<const int64_t> dims);

  // "[10,6]", "10,6", "(10, 6)", "[]" (scalar). Whitespace is ignored.
  static absl::StatusOr<Shape> Parse(absl::string_view text);

  int rank() const { return static_cast<int>(dims_.size()); }
  int64_t dim(int i) const { return dims_[i]; }
  int64_t operator[](int i) const { return dims_[i]; }
  absl::Span<const int64_t> dims() const { return dims_; }
  int64_t elem_cnt() const { return elem_cnt_; }

  // "[10,6]"; "[]" for a scalar.
  std::string ToString() const;

  // An inline loop, not InlinedVector's memcmp call: shapes are short and
  // compared on every inference-cache hit.
  friend bool operator==(const Shape& a, const Shape& b) {
    const size_t n = a.dims_.size();
    if (n != b.dims_.size() || a.elem_cnt_ != b.elem_cnt_) return false;
    const int64_t* x = a.dims_.data();
    const int64_t* y = b.dims_.data();
    for (size_t i = 0; i < n; ++i) {
      if (x[i] != y[i]) return false;
    }
    return true;
  }
  friend bool operator!=(const Shape& a, const Shape& b) { return !(a == b); }

  template <typename H>
  friend H AbslHashValue(H h, const Shape& s) {
    return H::combine(std::move(h), s.dims_);
  }

 private:
  absl::InlinedVector<int64_t, 6> dims_;
  int64_t elem_cnt_ = 1;
};

// Element count times `bytes_per_elem`, or kInvalidArgument on overflow.
absl::StatusOr<int64_t> CheckedByteSize(const Shape& shape, int bytes_per_elem);

}  // namespace oneflow_sbp

#endif  // ONEFLOW_SBP_VALUES_SHAPE_H_
