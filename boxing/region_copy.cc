#include "boxing/region_copy.h"

#include <cstring>

#include "absl/strings/str_cat.h"
#include "oneflow_sbp/element_type.h"

namespace oneflow_sbp::boxing {
namespace {

// Walks `region` inside a shard of `slice` as contiguous runs: calls
// f(offset_in_shard, offset_in_region, run_elements) for each run, both
// offsets in elements, in row-major order of the region.
template <typename F>
void ForEachRun(const TensorSlice& slice, const TensorSlice& region, F&& f) {
  const int rank = region.rank();
  if (region.elem_cnt() == 0) return;
  if (rank == 0) {
    f(0, 0, 1);
    return;
  }
  LocalDims dims(rank), ext(rank), begin(rank);
  for (int d = 0; d < rank; ++d) {
    dims[d] = slice.range(d).size();
    ext[d] = region.range(d).size();
    begin[d] = region.range(d).begin - slice.range(d).begin;
  }
  const LocalDims strides = RowMajorStrides(dims);
  // Merge trailing dims the region covers fully into one run.
  int k = rank - 1;
  int64_t run = ext[k];
  while (k > 0 && ext[k] == dims[k]) {
    --k;
    run *= ext[k];
  }
  // Odometer over dims [0, k).
  LocalDims idx(k, 0);
  int64_t packed = 0;
  while (true) {
    int64_t offset = begin[k] * strides[k];
    for (int d = 0; d < k; ++d) offset += (begin[d] + idx[d]) * strides[d];
    f(offset, packed, run);
    packed += run;
    int d = k - 1;
    for (; d >= 0; --d) {
      if (++idx[d] < ext[d]) break;
      idx[d] = 0;
    }
    if (d < 0) return;
  }
}

}  // namespace

void AddInto(DataType dtype, void* accumulator, const void* addend, int64_t count) {
  VisitDataType(dtype, [&](auto tag) {
    using T = typename decltype(tag)::type;
    T* acc = static_cast<T*>(accumulator);
    const T* add = static_cast<const T*>(addend);
    for (int64_t i = 0; i < count; ++i) {
      if constexpr (std::is_same_v<T, bool>) {
        acc[i] = acc[i] || add[i];
      } else if constexpr (kIsHalfType<T>) {
        acc[i] = T(static_cast<float>(acc[i]) + static_cast<float>(add[i]));
      } else {
        acc[i] = static_cast<T>(acc[i] + add[i]);
      }
    }
  });
}

absl::Status CheckRegion(const LocalTensor& shard, const TensorSlice& slice,
                         const TensorSlice& region) {
  if (!shard.defined() || shard.rank() != slice.rank() || region.rank() != slice.rank()) {
    return absl::InvalidArgumentError(absl::StrCat(
        "region ", region.ToString(), " of shard ", shard.ToString(2), " holding ",
        slice.ToString(), ": ranks differ or the shard is undefined"));
  }
  for (int d = 0; d < slice.rank(); ++d) {
    const IndexRange s = slice.range(d);
    const IndexRange r = region.range(d);
    if (shard.dim(d) != s.size() ||
        (!region.range(d).empty() && (r.begin < s.begin || r.end > s.end))) {
      return absl::InvalidArgumentError(absl::StrCat("region ", region.ToString(),
                                                     " is not inside shard ", slice.ToString(),
                                                     " of dims ", DimsToString(shard.dims())));
    }
  }
  return absl::OkStatus();
}

absl::Status PackRegion(const LocalTensor& shard, const TensorSlice& slice,
                        const TensorSlice& region, void* out) {
  absl::Status s = CheckRegion(shard, slice, region);
  if (!s.ok()) return s;
  const int64_t es = ByteSizeOf(shard.dtype());
  const char* base = static_cast<const char*>(shard.raw_data());
  char* dst = static_cast<char*>(out);
  ForEachRun(slice, region, [&](int64_t at, int64_t packed, int64_t run) {
    std::memcpy(dst + packed * es, base + at * es, run * es);
  });
  return absl::OkStatus();
}

absl::Status UnpackRegion(const void* in, const TensorSlice& region, LocalTensor* shard,
                          const TensorSlice& slice, RegionOp op) {
  absl::Status s = CheckRegion(*shard, slice, region);
  if (!s.ok()) return s;
  const DataType dtype = shard->dtype();
  const int64_t es = ByteSizeOf(dtype);
  char* base = static_cast<char*>(shard->raw_data());
  const char* src = static_cast<const char*>(in);
  ForEachRun(slice, region, [&](int64_t at, int64_t packed, int64_t run) {
    if (op == RegionOp::kCopy) {
      std::memcpy(base + at * es, src + packed * es, run * es);
    } else {
      AddInto(dtype, base + at * es, src + packed * es, run);
    }
  });
  return absl::OkStatus();
}

absl::Status CopyRegion(const LocalTensor& from, const TensorSlice& from_slice,
                        const TensorSlice& region, LocalTensor* to, const TensorSlice& to_slice,
                        RegionOp op) {
  absl::Status s = CheckRegion(from, from_slice, region);
  if (s.ok()) s = CheckRegion(*to, to_slice, region);
  if (!s.ok()) return s;
  if (from.dtype() != to->dtype()) {
    return absl::InvalidArgumentError(absl::StrCat("region copy from ",
                                                   DataTypeName(from.dtype()), " to ",
                                                   DataTypeName(to->dtype())));
  }
  // Pack once: the two shards' runs need not line up.
  absl::StatusOr<LocalTensor> buffer =
      LocalTensor::Empty(from.dtype(), {region.elem_cnt()});
  if (!buffer.ok()) return buffer.status();
  s = PackRegion(from, from_slice, region, buffer->raw_data());
  if (!s.ok()) return s;
  return UnpackRegion(buffer->raw_data(), region, to, to_slice, op);
}

}  // namespace oneflow_sbp::boxing
