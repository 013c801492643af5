#include "runtime/region_copy.h"

#include <cstring>

#include "absl/strings/str_cat.h"
#include "oneflow_sbp/storage/device_ops.h"
#include "oneflow_sbp/storage/element_type.h"
#include "oneflow_sbp/values/status_macros.h"

namespace oneflow_sbp::runtime {
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

// The same walk over two shards at once: f(offset_in_a, offset_in_b, run).
// Trailing dims merge into one run only where the region covers both
// shards fully.
template <typename F>
void ForEachRunPair(const TensorSlice& a, const TensorSlice& b, const TensorSlice& region, F&& f) {
  const int rank = region.rank();
  if (region.elem_cnt() == 0) return;
  if (rank == 0) {
    f(0, 0, 1);
    return;
  }
  LocalDims da(rank), db(rank), ext(rank), ba(rank), bb(rank);
  for (int d = 0; d < rank; ++d) {
    da[d] = a.range(d).size();
    db[d] = b.range(d).size();
    ext[d] = region.range(d).size();
    ba[d] = region.range(d).begin - a.range(d).begin;
    bb[d] = region.range(d).begin - b.range(d).begin;
  }
  const LocalDims sa = RowMajorStrides(da);
  const LocalDims sb = RowMajorStrides(db);
  int k = rank - 1;
  int64_t run = ext[k];
  while (k > 0 && ext[k] == da[k] && ext[k] == db[k]) {
    --k;
    run *= ext[k];
  }
  LocalDims idx(k, 0);
  while (true) {
    int64_t oa = ba[k] * sa[k];
    int64_t ob = bb[k] * sb[k];
    for (int d = 0; d < k; ++d) {
      oa += (ba[d] + idx[d]) * sa[d];
      ob += (bb[d] + idx[d]) * sb[d];
    }
    f(oa, ob, run);
    int d = k - 1;
    for (; d >= 0; --d) {
      if (++idx[d] < ext[d]) break;
      idx[d] = 0;
    }
    if (d < 0) return;
  }
}

// Region copies of device shards go to the device backend as one strided
// box (one kernel on CUDA instead of one copy per run). `a` and `b` are the
// slices whose row-major strides the source and destination use; a null
// slice means a packed buffer laid out as `region` itself.
absl::Status DeviceBox(DeviceType device, DataType dtype, const TensorSlice& region,
                       const TensorSlice* a, const void* src, const TensorSlice* b, void* dst,
                       bool add) {
  OFS_ASSIGN_OR_RETURN(DeviceOps* ops, GetDeviceOps(device));
  const int rank = region.rank();
  if (rank > StridedBox::kMaxRank) {
    return absl::UnimplementedError(absl::StrCat("device region copy of rank ", rank, " (max ",
                                                 StridedBox::kMaxRank, ")"));
  }
  if (region.elem_cnt() == 0) return absl::OkStatus();
  StridedBox box;
  box.rank = rank;
  const int64_t es = ByteSizeOf(dtype);
  auto layout = [&](const TensorSlice* s, int64_t* strides) -> int64_t {
    LocalDims dims(rank);
    for (int d = 0; d < rank; ++d) dims[d] = (s ? *s : region).range(d).size();
    const LocalDims st = RowMajorStrides(dims);
    int64_t offset = 0;
    for (int d = 0; d < rank; ++d) {
      strides[d] = st[d];
      if (s) offset += (region.range(d).begin - s->range(d).begin) * st[d];
    }
    return offset;
  };
  for (int d = 0; d < rank; ++d) box.ext[d] = region.range(d).size();
  const int64_t so = layout(a, box.src_stride);
  const int64_t dof = layout(b, box.dst_stride);
  return ops->CopyBox(dtype, box, static_cast<const char*>(src) + so * es,
                         static_cast<char*>(dst) + dof * es, add);
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
  OFS_RETURN_IF_ERROR(s);
  if (shard.device() != DeviceType::kCpu) {
    return DeviceBox(shard.device(), shard.dtype(), region, &slice, shard.raw_data(), nullptr,
                     out, false);
  }
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
  OFS_RETURN_IF_ERROR(s);
  if (shard->device() != DeviceType::kCpu) {
    return DeviceBox(shard->device(), shard->dtype(), region, nullptr, in, &slice,
                     shard->raw_data(), op == RegionOp::kAdd);
  }
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
  OFS_RETURN_IF_ERROR(s);
  if (from.dtype() != to->dtype()) {
    return absl::InvalidArgumentError(absl::StrCat("region copy from ",
                                                   DataTypeName(from.dtype()), " to ",
                                                   DataTypeName(to->dtype())));
  }
  if (from.device() != to->device()) {
    return absl::InvalidArgumentError(absl::StrCat("region copy from ",
                                                   DeviceTypeName(from.device()), " to ",
                                                   DeviceTypeName(to->device())));
  }
  if (from.device() != DeviceType::kCpu) {
    return DeviceBox(from.device(), from.dtype(), region, &from_slice, from.raw_data(),
                     &to_slice, to->raw_data(), op == RegionOp::kAdd);
  }
  const DataType dtype = from.dtype();
  const int64_t es = ByteSizeOf(dtype);
  const char* src = static_cast<const char*>(from.raw_data());
  char* dst = static_cast<char*>(to->raw_data());
  ForEachRunPair(from_slice, to_slice, region, [&](int64_t a, int64_t b, int64_t run) {
    if (op == RegionOp::kCopy) {
      std::memcpy(dst + b * es, src + a * es, run * es);
    } else {
      AddInto(dtype, dst + b * es, src + a * es, run);
    }
  });
  return absl::OkStatus();
}

}  // namespace oneflow_sbp::runtime