#include "kernels/common/box_copy.h"

#include <algorithm>
#include <cstring>

#include "absl/strings/str_cat.h"
#include "oneflow_sbp/storage/device_ops.h"
#include "oneflow_sbp/values/status_macros.h"

namespace oneflow_sbp::kernels {
namespace {

// ceil(a / b) for b > 0 and any sign of a.
int64_t CeilDiv(int64_t a, int64_t b) {
  const int64_t q = a / b;
  return (a % b != 0 && a > 0) ? q + 1 : q;
}

struct Interval {
  std::vector<int64_t> lo;
  std::vector<int64_t> hi;
  bool empty = false;

  int64_t count() const {
    if (empty) return 0;
    int64_t n = 1;
    for (size_t d = 0; d < lo.size(); ++d) n *= std::max<int64_t>(0, hi[d] - lo[d]);
    return n;
  }
};

// Narrows `iv` to the points whose coordinate under `m` lies in `r`.
void Constrain(const DimMap& m, IndexRange r, Interval* iv) {
  if (m.index_dim < 0 || m.step == 0) {
    if (!(m.offset >= r.begin && m.offset < r.end)) iv->empty = true;
    return;
  }
  const int d = m.index_dim;
  iv->lo[d] = std::max(iv->lo[d], CeilDiv(r.begin - m.offset, m.step));
  iv->hi[d] = std::min(iv->hi[d], CeilDiv(r.end - m.offset, m.step));
}

absl::Status CheckMaps(const std::vector<DimMap>& maps, const TensorSlice& slice,
                       const LocalTensor& t, int index_rank, const char* what) {
  if (static_cast<int>(maps.size()) != slice.rank() || t.rank() != slice.rank()) {
    return absl::InternalError(absl::StrCat("BoxCopy: ", maps.size(), " ", what,
                                            " maps for a rank-", t.rank(), " tensor and a rank-",
                                            slice.rank(), " slice"));
  }
  for (int j = 0; j < slice.rank(); ++j) {
    const IndexRange r = slice.range(j);
    if (t.dim(j) != std::max<int64_t>(0, r.size())) {
      return absl::InternalError(absl::StrCat("BoxCopy: ", what, " dims ",
                                              DimsToString(t.dims()), " differ from its slice ",
                                              slice.ToString()));
    }
    const DimMap& m = maps[j];
    if (m.index_dim >= index_rank || m.step < 0) {
      return absl::InternalError(absl::StrCat("BoxCopy: ", what, " dim ", j, " maps to index dim ",
                                              m.index_dim, " with step ", m.step, " in a rank-",
                                              index_rank, " box"));
    }
  }
  return absl::OkStatus();
}

// Base offset (in elements) and per-index-dim steps of one side, for the
// first point `lo` of the copied box.
void Addressing(const std::vector<DimMap>& maps, const TensorSlice& slice, const LocalTensor& t,
                const std::vector<int64_t>& lo, int64_t* base, std::vector<int64_t>* steps) {
  const LocalDims strides = RowMajorStrides(t.dims());
  *base = 0;
  steps->assign(lo.size(), 0);
  for (size_t j = 0; j < maps.size(); ++j) {
    const DimMap& m = maps[j];
    const int64_t first = m.index_dim >= 0 ? m.offset + m.step * lo[m.index_dim] : m.offset;
    *base += (first - slice.range(static_cast<int>(j)).begin) * strides[j];
    if (m.index_dim >= 0) (*steps)[m.index_dim] += m.step * strides[j];
  }
}

// Walks the box [lo, hi) row-major, calling run(src_offset, dst_offset, n)
// for every innermost run of n points.
template <typename Run>
void WalkBox(const std::vector<int64_t>& lo, const std::vector<int64_t>& hi, int64_t src_base,
             const std::vector<int64_t>& src_steps, int64_t dst_base,
             const std::vector<int64_t>& dst_steps, Run&& run) {
  const int k = static_cast<int>(lo.size());
  if (k == 0) {
    run(src_base, dst_base, 1);
    return;
  }
  const int64_t inner = hi[k - 1] - lo[k - 1];
  std::vector<int64_t> idx(lo.begin(), lo.end());
  int64_t s = src_base;
  int64_t d = dst_base;
  while (true) {
    run(s, d, inner);
    int a = k - 2;
    for (; a >= 0; --a) {
      ++idx[a];
      s += src_steps[a];
      d += dst_steps[a];
      if (idx[a] < hi[a]) break;
      s -= src_steps[a] * (hi[a] - lo[a]);
      d -= dst_steps[a] * (hi[a] - lo[a]);
      idx[a] = lo[a];
    }
    if (a < 0) return;
  }
}

// Transposing copies (the source is contiguous along the second-to-last
// index dim, the destination along the last) go tile by tile so that both
// sides stay in cache.
template <typename U>
bool CopyTransposed(const Interval& iv, const U* src, int64_t src_base,
                    const std::vector<int64_t>& src_steps, U* dst, int64_t dst_base,
                    const std::vector<int64_t>& dst_steps) {
  constexpr int64_t kTile = 16;
  const int k = static_cast<int>(iv.lo.size());
  if (src == nullptr || k < 2 || src_steps[k - 2] != 1 || dst_steps[k - 1] != 1 ||
      src_steps[k - 1] == 1) {
    return false;
  }
  const int64_t rows = iv.hi[k - 2] - iv.lo[k - 2];
  const int64_t cols = iv.hi[k - 1] - iv.lo[k - 1];
  const int64_t src_col = src_steps[k - 1];
  const int64_t dst_row = dst_steps[k - 2];
  // Walk the dims before the last two; each call covers one rows x cols plane.
  std::vector<int64_t> lo(iv.lo.begin(), iv.lo.end() - 1);
  std::vector<int64_t> hi(iv.hi.begin(), iv.hi.end() - 1);
  hi[k - 2] = lo[k - 2] + 1;
  const std::vector<int64_t> ss(src_steps.begin(), src_steps.end() - 1);
  const std::vector<int64_t> ds(dst_steps.begin(), dst_steps.end() - 1);
  WalkBox(lo, hi, src_base, ss, dst_base, ds, [&](int64_t s, int64_t d, int64_t) {
    for (int64_t r0 = 0; r0 < rows; r0 += kTile) {
      const int64_t r1 = std::min(rows, r0 + kTile);
      for (int64_t c0 = 0; c0 < cols; c0 += kTile) {
        const int64_t c1 = std::min(cols, c0 + kTile);
        for (int64_t r = r0; r < r1; ++r) {
          for (int64_t c = c0; c < c1; ++c) dst[d + r * dst_row + c] = src[s + r + c * src_col];
        }
      }
    }
  });
  return true;
}

template <typename U>
void CopyTyped(const Interval& iv, const U* src, int64_t src_base,
               const std::vector<int64_t>& src_steps, U* dst, int64_t dst_base,
               const std::vector<int64_t>& dst_steps) {
  if (CopyTransposed(iv, src, src_base, src_steps, dst, dst_base, dst_steps)) return;
  const int k = static_cast<int>(iv.lo.size());
  const int64_t ss = k ? src_steps[k - 1] : 0;
  const int64_t ds = k ? dst_steps[k - 1] : 0;
  WalkBox(iv.lo, iv.hi, src_base, src_steps, dst_base, dst_steps,
          [&](int64_t s, int64_t d, int64_t n) {
            if (src == nullptr) {
              if (ds == 1) {
                std::memset(dst + d, 0, static_cast<size_t>(n) * sizeof(U));
              } else {
                for (int64_t i = 0; i < n; ++i) dst[d + i * ds] = U(0);
              }
            } else if (ss == 1 && ds == 1) {
              std::memcpy(dst + d, src + s, static_cast<size_t>(n) * sizeof(U));
            } else {
              for (int64_t i = 0; i < n; ++i) dst[d + i * ds] = src[s + i * ss];
            }
          });
}

// The copy of a device tensor: one strided CopyBox of the backend (one
// kernel on CUDA) instead of the host loops. A zero-fill reads one device
// zero with every source stride 0.
absl::Status DeviceBoxCopy(const Interval& iv, const LocalTensor* src, int64_t src_base,
                           const std::vector<int64_t>& src_steps, LocalTensor& dst,
                           int64_t dst_base, const std::vector<int64_t>& dst_steps) {
  const int k = static_cast<int>(iv.lo.size());
  if (k > StridedBox::kMaxRank) {
    return absl::UnimplementedError(absl::StrCat("BoxCopy on ", DeviceTypeName(dst.device()),
                                                 ": a rank-", k, " box (at most ",
                                                 StridedBox::kMaxRank, ")"));
  }
  if (src != nullptr && src->device() != dst.device()) {
    return absl::InternalError(absl::StrCat("BoxCopy: source on ", DeviceTypeName(src->device()),
                                            ", destination on ",
                                            DeviceTypeName(dst.device())));
  }
  OFS_ASSIGN_OR_RETURN(DeviceOps* ops, GetDeviceOps(dst.device()));
  StridedBox box;
  box.rank = k;
  for (int d = 0; d < k; ++d) {
    box.ext[d] = iv.hi[d] - iv.lo[d];
    box.src_stride[d] = src != nullptr ? src_steps[d] : 0;
    box.dst_stride[d] = dst_steps[d];
  }
  const int64_t esize = ByteSizeOf(dst.dtype());
  LocalTensor zero;
  const char* from;
  if (src != nullptr) {
    from = static_cast<const char*>(src->raw_data()) + src_base * esize;
  } else {
    OFS_ASSIGN_OR_RETURN(LocalTensor z, LocalTensor::Zeros(dst.dtype(), {1}, dst.device()));
    zero = std::move(z);
    from = static_cast<const char*>(zero.raw_data());
  }
  return ops->CopyBox(dst.dtype(), box, from,
                         static_cast<char*>(dst.raw_data()) + dst_base * esize, false);
}

}  // namespace

absl::StatusOr<BoxCopyCount> BoxCopy(const BoxCopyPlan& plan, const LocalTensor* src,
                                     const TensorSlice& src_slice, LocalTensor& dst,
                                     const TensorSlice& dst_slice) {
  const int k = static_cast<int>(plan.box.size());
  absl::Status s = CheckMaps(plan.dst, dst_slice, dst, k, "destination");
  OFS_RETURN_IF_ERROR(s);
  if (src != nullptr) {
    s = CheckMaps(plan.src, src_slice, *src, k, "source");
    OFS_RETURN_IF_ERROR(s);
    if (src->dtype() != dst.dtype()) {
      return absl::InternalError(absl::StrCat("BoxCopy: source ", DataTypeName(src->dtype()),
                                              " into destination ",
                                              DataTypeName(dst.dtype())));
    }
  }
  Interval wanted;
  for (const IndexRange& r : plan.box) {
    wanted.lo.push_back(r.begin);
    wanted.hi.push_back(r.end);
  }
  for (size_t j = 0; j < plan.dst.size(); ++j) {
    Constrain(plan.dst[j], dst_slice.range(static_cast<int>(j)), &wanted);
  }
  Interval copied = wanted;
  if (src != nullptr) {
    for (size_t j = 0; j < plan.src.size(); ++j) {
      Constrain(plan.src[j], src_slice.range(static_cast<int>(j)), &copied);
    }
  }
  BoxCopyCount count{wanted.count(), src != nullptr ? copied.count() : wanted.count()};
  if (count.copied == 0) return count;

  int64_t src_base = 0;
  std::vector<int64_t> src_steps(k, 0);
  if (src != nullptr) Addressing(plan.src, src_slice, *src, copied.lo, &src_base, &src_steps);
  int64_t dst_base;
  std::vector<int64_t> dst_steps;
  Addressing(plan.dst, dst_slice, dst, copied.lo, &dst_base, &dst_steps);
  if (dst.device() != DeviceType::kCpu) {
    absl::Status moved =
        DeviceBoxCopy(copied, src, src_base, src_steps, dst, dst_base, dst_steps);
    OFS_RETURN_IF_ERROR(moved);
    return count;
  }

  auto run = [&](auto type_tag) {
    using U = decltype(type_tag);
    const U* sp = src != nullptr ? static_cast<const U*>(src->raw_data()) : nullptr;
    CopyTyped<U>(copied, sp, src_base, src_steps, static_cast<U*>(dst.raw_data()), dst_base,
                 dst_steps);
  };
  switch (ByteSizeOf(dst.dtype())) {
    case 1: run(uint8_t{}); break;
    case 2: run(uint16_t{}); break;
    case 4: run(uint32_t{}); break;
    default: run(uint64_t{}); break;
  }
  return count;
}

}  // namespace oneflow_sbp::kernels
