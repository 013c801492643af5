#include "oneflow_sbp/storage/local_tensor.h"

#include <cmath>
#include <cstdlib>
#include <cstring>
#include <limits>
#include <new>
#include <type_traits>

#include "absl/container/flat_hash_map.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "absl/synchronization/mutex.h"
#include "oneflow_sbp/storage/device_ops.h"
#include "oneflow_sbp/values/status_macros.h"

namespace oneflow_sbp {

std::string DimsToString(absl::Span<const int64_t> dims) {
  return absl::StrCat("[", absl::StrJoin(dims, ","), "]");
}

absl::StatusOr<int64_t> CheckedElemCount(absl::Span<const int64_t> dims) {
  // 8 bytes per element is the largest dtype; keep byte sizes in int64.
  constexpr int64_t kMaxElems = std::numeric_limits<int64_t>::max() / 8;
  int64_t n = 1;
  bool any_zero = false;
  for (int64_t d : dims) {
    if (d < 0) {
      return absl::InvalidArgumentError(
          absl::StrCat("dims ", DimsToString(dims), " have a negative extent ", d));
    }
    if (d == 0) any_zero = true;
  }
  if (any_zero) return 0;
  for (int64_t d : dims) {
    if (n > kMaxElems / d) {
      return absl::InvalidArgumentError(
          absl::StrCat("dims ", DimsToString(dims), " have too many elements"));
    }
    n *= d;
  }
  return n;
}

LocalDims RowMajorStrides(absl::Span<const int64_t> dims) {
  LocalDims strides(dims.size());
  int64_t s = 1;
  for (int i = static_cast<int>(dims.size()) - 1; i >= 0; --i) {
    strides[i] = s;
    s *= dims[i] > 0 ? dims[i] : 1;
  }
  return strides;
}

// ------------------------------------------------------------------- Storage

namespace {

using FreeLists = absl::flat_hash_map<int64_t, std::vector<void*>>;

// Adds `p` to the free list of its size; false when memory for the list
// runs out (Storage's destructor, which calls this, must not throw).
bool TryPush(FreeLists& lists, void* p, int64_t padded) noexcept {
  try {
    lists[padded].push_back(p);
    return true;
  } catch (const std::bad_alloc&) {
    return false;
  }
}

// Freed CPU buffers by padded size. Thread-safe; bounded.
class CachingAllocator {
 public:
  void* Take(int64_t padded) {
    absl::MutexLock lock(&mu_);
    auto it = free_.find(padded);
    if (it == free_.end() || it->second.empty()) {
      ++stats_.misses;
      return nullptr;
    }
    void* p = it->second.back();
    it->second.pop_back();
    stats_.cached_bytes -= padded;
    ++stats_.hits;
    return p;
  }
  // False if the cache is full or cannot grow its lists (the caller
  // frees). Never throws: it runs in Storage's destructor.
  bool Give(void* p, int64_t padded) noexcept {
    absl::MutexLock lock(&mu_);
    if (stats_.cached_bytes + padded > Storage::kMaxCachedBytes) return false;
    if (!TryPush(free_, p, padded)) return false;
    stats_.cached_bytes += padded;
    return true;
  }
  void Release() {
    absl::MutexLock lock(&mu_);
    for (auto& [size, list] : free_) {
      for (void* p : list) std::free(p);
    }
    free_.clear();
    stats_.cached_bytes = 0;
  }
  Storage::CacheStats stats() {
    absl::MutexLock lock(&mu_);
    return stats_;
  }

 private:
  absl::Mutex mu_;
  FreeLists free_ ABSL_GUARDED_BY(mu_);
  Storage::CacheStats stats_ ABSL_GUARDED_BY(mu_);
};

CachingAllocator& SharedCache() {
  static CachingAllocator* cache = new CachingAllocator;
  return *cache;
}

// A small per-thread cache in front of the shared one: every rank thread
// of an eager program allocates the same few shapes each op, and a shared
// lock taken per allocation made the ranks queue on each other. Buffers of
// up to kThreadCachedBytes per thread stay here; the rest go to the shared
// cache. Freed by whichever thread releases the storage.
class ThreadCache {
 public:
  static constexpr int64_t kThreadCachedBytes = int64_t{64} << 20;
  ~ThreadCache() {
    for (auto& [size, list] : free_) {
      for (void* p : list) {
        if (!SharedCache().Give(p, size)) std::free(p);
      }
    }
  }
  void* Take(int64_t padded) {
    auto it = free_.find(padded);
    if (it != free_.end() && !it->second.empty()) {
      void* p = it->second.back();
      it->second.pop_back();
      bytes_ -= padded;
      return p;
    }
    return SharedCache().Take(padded);
  }
  // Never throws (see CachingAllocator::Give).
  bool Give(void* p, int64_t padded) noexcept {
    if (bytes_ + padded <= kThreadCachedBytes && TryPush(free_, p, padded)) {
      bytes_ += padded;
      return true;
    }
    return SharedCache().Give(p, padded);
  }

 private:
  FreeLists free_;
  int64_t bytes_ = 0;
};

ThreadCache& BufferCache() {
  thread_local ThreadCache cache;
  return cache;
}

}  // namespace

absl::StatusOr<std::shared_ptr<Storage>> Storage::Allocate(DeviceType device,
                                                           int64_t byte_size) {
  if (byte_size < 0) {
    return absl::InvalidArgumentError(absl::StrCat("storage of ", byte_size, " bytes"));
  }
  if (device != DeviceType::kCpu) {
    // Other devices allocate through their backend (which caches on its
    // own); the CPU path below stays as it was.
    OFS_ASSIGN_OR_RETURN(DeviceOps* ops, GetDeviceOps(device));
    const int64_t bytes = std::max<int64_t>(kAlignment, byte_size);
    OFS_ASSIGN_OR_RETURN(void* p, ops->Allocate(bytes));
    return Own(device, p, byte_size, bytes);
  }
  // aligned_alloc wants a multiple of the alignment.
  const int64_t padded = std::max<int64_t>(
      kAlignment, (byte_size + kAlignment - 1) / kAlignment * kAlignment);
  void* p = BufferCache().Take(padded);
  if (p == nullptr) p = std::aligned_alloc(kAlignment, static_cast<size_t>(padded));
  if (p == nullptr) {
    return absl::ResourceExhaustedError(
        absl::StrCat("out of memory allocating ", byte_size, " bytes on cpu"));
  }
  return Own(device, p, byte_size, padded);
}

absl::StatusOr<std::shared_ptr<Storage>> Storage::Own(DeviceType device, void* data,
                                                      int64_t byte_size, int64_t padded) {
  // The Storage and the shared_ptr's control block are small allocations
  // of their own; when they fail, the buffer goes back and the caller gets
  // the same error as for the buffer.
  Storage* storage = new (std::nothrow) Storage(device, data, byte_size, padded);
  if (storage == nullptr) {
    if (device == DeviceType::kCpu) {
      std::free(data);
    } else if (absl::StatusOr<DeviceOps*> ops = GetDeviceOps(device); ops.ok()) {
      (*ops)->Free(data, padded);
    }
    return absl::ResourceExhaustedError(absl::StrCat("out of memory allocating the storage of ",
                                                     byte_size, " bytes on ",
                                                     DeviceTypeName(device)));
  }
  try {
    return std::shared_ptr<Storage>(storage);  // deletes `storage` if it throws
  } catch (const std::bad_alloc&) {
    return absl::ResourceExhaustedError(absl::StrCat("out of memory allocating the storage of ",
                                                     byte_size, " bytes on ",
                                                     DeviceTypeName(device)));
  }
}

Storage::~Storage() {
  if (device_ != DeviceType::kCpu) {
    // The backend existed when this storage was allocated and lives for
    // the program.
    absl::StatusOr<DeviceOps*> ops = GetDeviceOps(device_);
    if (ops.ok()) (*ops)->Free(data_, padded_);
    return;
  }
  if (!BufferCache().Give(data_, padded_)) std::free(data_);
}

Storage::CacheStats Storage::cache_stats() { return SharedCache().stats(); }

void Storage::ReleaseCache() { SharedCache().Release(); }

// --------------------------------------------------------------- LocalTensor

absl::StatusOr<LocalTensor> LocalTensor::Empty(DataType dtype, absl::Span<const int64_t> dims,
                                               DeviceType device) {
  OFS_ASSIGN_OR_RETURN(int64_t n, CheckedElemCount(dims));
  OFS_ASSIGN_OR_RETURN(std::shared_ptr<Storage> storage, Storage::Allocate(device,
      n * ByteSizeOf(dtype)));
  LocalTensor t;
  t.dtype_ = dtype;
  t.dims_.assign(dims.begin(), dims.end());
  t.elem_cnt_ = n;
  t.storage_ = std::move(storage);
  return t;
}

absl::StatusOr<LocalTensor> LocalTensor::Zeros(DataType dtype, absl::Span<const int64_t> dims,
                                               DeviceType device) {
  absl::StatusOr<LocalTensor> t = Empty(dtype, dims, device);
  if (t.ok()) t->SetZero();
  return t;
}

absl::StatusOr<LocalTensor> LocalTensor::Full(DataType dtype, absl::Span<const int64_t> dims,
                                              double value) {
  absl::StatusOr<LocalTensor> t = Empty(dtype, dims);
  OFS_RETURN_IF_ERROR(t.status());
  VisitDataType(dtype, [&](auto tag) {
    using T = typename decltype(tag)::type;
    const T v = ConvertElement<T>(value);
    T* p = t->data<T>();
    for (int64_t i = 0; i < t->elem_cnt(); ++i) p[i] = v;
  });
  return t;
}

absl::StatusOr<LocalTensor> LocalTensor::FromDoubles(DataType dtype,
                                                     absl::Span<const int64_t> dims,
                                                     absl::Span<const double> values) {
  absl::StatusOr<LocalTensor> t = Empty(dtype, dims);
  OFS_RETURN_IF_ERROR(t.status());
  if (static_cast<int64_t>(values.size()) != t->elem_cnt()) {
    return absl::InvalidArgumentError(
        absl::StrCat("LocalTensor::FromDoubles: ", values.size(), " values for ",
                     DataTypeName(dtype), DimsToString(dims), " (", t->elem_cnt(),
                     " elements)"));
  }
  for (int64_t i = 0; i < t->elem_cnt(); ++i) t->SetDouble(i, values[i]);
  return t;
}

LocalTensor LocalTensor::Clone() const {
  OFS_CHECK(defined()) << "Clone() of an undefined LocalTensor";
  absl::StatusOr<LocalTensor> t = Empty(dtype_, dims_, device());
  OFS_CHECK(t.ok()) << t.status().message();
  if (device() == DeviceType::kCpu) {
    std::memcpy(t->raw_data(), raw_data(), static_cast<size_t>(byte_size()));
  } else {
    absl::Status s = (*GetDeviceOps(device()))
                         ->Copy(t->raw_data(), raw_data(), byte_size(), CopyDirection::kSameDevice);
    OFS_CHECK(s.ok()) << "Clone on " << DeviceTypeName(device()) << ": " << s.message();
  }
  return *std::move(t);
}

absl::StatusOr<LocalTensor> LocalTensor::CopyTo(DeviceType target) const {
  if (!defined()) return absl::InvalidArgumentError("CopyTo of an undefined LocalTensor");
  OFS_ASSIGN_OR_RETURN(LocalTensor t, Empty(dtype_, dims_, target));
  const DeviceType from = device();
  if (from == DeviceType::kCpu && target == DeviceType::kCpu) {
    std::memcpy(t.raw_data(), raw_data(), static_cast<size_t>(byte_size()));
    return t;
  }
  if (from != DeviceType::kCpu && target != DeviceType::kCpu && from != target) {
    return absl::UnimplementedError(absl::StrCat("CopyTo from ", DeviceTypeName(from), " to ",
                                                 DeviceTypeName(target)));
  }
  const DeviceType dev = from == DeviceType::kCpu ? target : from;
  OFS_ASSIGN_OR_RETURN(DeviceOps* ops, GetDeviceOps(dev));
  const CopyDirection dir = from == target            ? CopyDirection::kSameDevice
                            : from == DeviceType::kCpu ? CopyDirection::kHostToDevice
                                                       : CopyDirection::kDeviceToHost;
  absl::Status s = ops->Copy(t.raw_data(), raw_data(), byte_size(), dir);
  OFS_RETURN_IF_ERROR(s);
  return t;
}

DeviceType LocalTensor::device() const {
  return storage_ ? storage_->device() : DeviceType::kCpu;
}

double LocalTensor::GetDouble(int64_t i) const {
  OFS_CHECK(device() == DeviceType::kCpu) << "GetDouble on a " << DeviceTypeName(device())
                                          << " tensor; CopyTo(kCpu) first";
  OFS_CHECK(i >= 0 && i < elem_cnt_) << "element " << i << " of " << elem_cnt_;
  return VisitDataType(dtype_, [&](auto tag) {
    using T = typename decltype(tag)::type;
    return ConvertElement<double>(data<T>()[i]);
  });
}

void LocalTensor::SetDouble(int64_t i, double value) {
  OFS_CHECK(device() == DeviceType::kCpu) << "SetDouble on a " << DeviceTypeName(device())
                                          << " tensor; CopyTo(kCpu) first";
  OFS_CHECK(i >= 0 && i < elem_cnt_) << "element " << i << " of " << elem_cnt_;
  VisitDataType(dtype_, [&](auto tag) {
    using T = typename decltype(tag)::type;
    data<T>()[i] = ConvertElement<T>(value);
  });
}

std::vector<double> LocalTensor::ToDoubles() const {
  std::vector<double> out(static_cast<size_t>(elem_cnt_));
  for (int64_t i = 0; i < elem_cnt_; ++i) out[i] = GetDouble(i);
  return out;
}

void LocalTensor::SetZero() {
  if (!defined()) return;
  if (device() == DeviceType::kCpu) {
    std::memset(raw_data(), 0, static_cast<size_t>(byte_size()));
    return;
  }
  absl::Status s = (*GetDeviceOps(device()))->Zero(raw_data(), byte_size());
  OFS_CHECK(s.ok()) << "SetZero on " << DeviceTypeName(device()) << ": " << s.message();
}

namespace {

std::string FormatValue(DataType dtype, double v) {
  if (dtype == DataType::kBool) return v != 0 ? "true" : "false";
  return absl::StrCat(v);
}

// The multi-index of row-major element `i` of `dims`, as "[1,0,2]".
std::string IndexString(absl::Span<const int64_t> dims, int64_t i) {
  LocalDims idx(dims.size());
  for (int d = static_cast<int>(dims.size()) - 1; d >= 0; --d) {
    idx[d] = dims[d] > 0 ? i % dims[d] : 0;
    i = dims[d] > 0 ? i / dims[d] : 0;
  }
  return DimsToString(idx);
}

}  // namespace

std::string LocalTensor::ToString(int64_t max_elems) const {
  if (!defined()) return "undefined";
  if (device() != DeviceType::kCpu) {
    absl::StatusOr<LocalTensor> host = CopyTo(DeviceType::kCpu);
    if (!host.ok()) return absl::StrCat(DeviceTypeName(device()), " tensor: ", host.status().message());
    return absl::StrCat(DeviceTypeName(device()), ":", host->ToString(max_elems));
  }
  std::string s = absl::StrCat(DataTypeName(dtype_), DimsToString(dims_), " {");
  for (int64_t i = 0; i < elem_cnt_ && i < max_elems; ++i) {
    absl::StrAppend(&s, i ? ", " : "", FormatValue(dtype_, GetDouble(i)));
  }
  if (elem_cnt_ > max_elems) absl::StrAppend(&s, ", ...");
  return absl::StrCat(s, "}");
}

std::string DescribeMismatch(const LocalTensor& a, const LocalTensor& b) {
  if (a.defined() != b.defined()) {
    return absl::StrCat(a.defined() ? "defined" : "undefined", " vs ",
                        b.defined() ? "defined" : "undefined");
  }
  if (!a.defined()) return "";
  if (a.device() != DeviceType::kCpu || b.device() != DeviceType::kCpu) {
    absl::StatusOr<LocalTensor> ha = a.CopyTo(DeviceType::kCpu);
    absl::StatusOr<LocalTensor> hb = b.CopyTo(DeviceType::kCpu);
    if (!ha.ok()) return std::string(ha.status().message());
    if (!hb.ok()) return std::string(hb.status().message());
    return DescribeMismatch(*ha, *hb);
  }
  if (a.dtype() != b.dtype()) {
    return absl::StrCat("dtype ", DataTypeName(a.dtype()), " vs ", DataTypeName(b.dtype()));
  }
  if (a.dims() != b.dims()) {
    return absl::StrCat("dims ", DimsToString(a.dims()), " vs ", DimsToString(b.dims()));
  }
  // Compared in the element type, so that i64 values above 2^53 count.
  const int64_t first = VisitDataType(a.dtype(), [&](auto tag) -> int64_t {
    using T = typename decltype(tag)::type;
    const T* x = a.data<T>();
    const T* y = b.data<T>();
    for (int64_t i = 0; i < a.elem_cnt(); ++i) {
      if constexpr (std::is_integral_v<T>) {
        if (x[i] != y[i]) return i;
      } else {
        const double u = ConvertElement<double>(x[i]);
        const double v = ConvertElement<double>(y[i]);
        if (!(u == v || (std::isnan(u) && std::isnan(v)))) return i;
      }
    }
    return -1;
  });
  if (first < 0) return "";
  return absl::StrCat("element ", first, " ", IndexString(a.dims(), first), ": ",
                      FormatValue(a.dtype(), a.GetDouble(first)), " vs ",
                      FormatValue(b.dtype(), b.GetDouble(first)));
}

}  // namespace oneflow_sbp
