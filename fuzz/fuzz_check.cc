#include "fuzz/fuzz_check.h"

#include <cstdio>
#include <cstdlib>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/status/statusor.h"
#include "oneflow_sbp/values/tensor_slice_view.h"

namespace oneflow_sbp::fuzz {

void PropertyFailed(const char* file, int line, const char* cond, const std::string& what) {
  std::fprintf(stderr, "%s:%d: property failed: %s\n  %s\n", file, line, cond, what.c_str());
  std::abort();
}

void CheckNotInternal(const absl::Status& status, const std::string& what) {
  FUZZ_CHECK(status.code() != absl::StatusCode::kInternal &&
                 status.code() != absl::StatusCode::kUnknown,
             absl::StrCat(what, ": ", status.ToString()));
}

void CheckSlicesTile(const Shape& shape, const NdSbp& nd_sbp, const Placement& placement,
                     int64_t max_elems) {
  absl::StatusOr<std::vector<TensorSlice>> slices = AllRankSlices(shape, nd_sbp, placement);
  CheckNotInternal(slices.status(), "AllRankSlices");
  if (!slices.ok()) return;
  const std::string what =
      absl::StrCat(shape.ToString(), " ", nd_sbp.ToString(), " ", placement.ToString());
  FUZZ_CHECK(static_cast<int64_t>(slices->size()) == placement.parallel_num(), what);
  int64_t replicas = 1;
  for (int i = 0; i < nd_sbp.size(); ++i) {
    if (!nd_sbp[i].is_split()) replicas *= placement.hierarchy()[i];
  }
  // Counts: the slices hold replicas copies of the tensor in all.
  __int128 held = 0;
  for (const TensorSlice& s : *slices) {
    FUZZ_CHECK(s.rank() == shape.rank(), what);
    for (int d = 0; d < s.rank(); ++d) {
      const IndexRange r = s.range(d);
      FUZZ_CHECK(0 <= r.begin && r.begin <= r.end && r.end <= shape.dim(d),
                 absl::StrCat(what, " slice ", s.ToString()));
    }
    held += s.elem_cnt();
  }
  FUZZ_CHECK(held == static_cast<__int128>(shape.elem_cnt()) * replicas, what);
  if (shape.elem_cnt() > max_elems) return;
  // Element by element: each is held exactly `replicas` times.
  std::vector<int64_t> count(shape.elem_cnt(), 0);
  for (const TensorSlice& s : *slices) {
    if (s.elem_cnt() == 0) continue;
    std::vector<int64_t> idx(s.rank());
    for (int d = 0; d < s.rank(); ++d) idx[d] = s.range(d).begin;
    while (true) {
      int64_t flat = 0;
      for (int d = 0; d < s.rank(); ++d) flat = flat * shape.dim(d) + idx[d];
      ++count[flat];
      int d = s.rank() - 1;
      for (; d >= 0; --d) {
        if (++idx[d] < s.range(d).end) break;
        idx[d] = s.range(d).begin;
      }
      if (d < 0) break;
    }
  }
  for (int64_t c : count) FUZZ_CHECK(c == replicas, what);
}

}  // namespace oneflow_sbp::fuzz
