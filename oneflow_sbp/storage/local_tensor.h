// LocalTensor: the part of a tensor one rank holds (its local shard), as a
// kernel reads and writes it: dtype, dims and dense row-major storage.
//
// Example:
//   absl::StatusOr<LocalTensor> t = LocalTensor::FromValues<float>({2, 3}, {1, 2, 3, 4, 5, 6});
//   t->elem_cnt();            // 6
//   t->data<float>()[4];      // 5
//   t->ToString();            // "f32[2,3] {1, 2, 3, 4, 5, 6}"
//   LocalTensor empty = *LocalTensor::Zeros(DataType::kInt64, {0, 4});   // a legal empty shard
//
// Contract:
// * Dims are any sizes >= 0. Unlike Shape (which describes LOGICAL tensors
//   and forbids 0), a local shard is empty when a split extent is smaller
//   than the number of parts (SPEC.md §1.5). Rank 0 is a scalar (1 element).
// * Storage is contiguous, row-major, 64-byte aligned and shared: copying a
//   LocalTensor copies a handle (both see the same bytes, as with
//   torch.Tensor); Clone() copies the bytes. Kernels write their outputs
//   through the handles the caller gave them.
// * A default-constructed LocalTensor is undefined (defined() is false, no
//   storage); every factory returns a defined one.
// * data<T>() requires T to be the element type of dtype() (element_type.h);
//   a mismatch is a programming error and aborts (OFS_CHECK). Everything
//   that user input can reach (dims, value counts) returns a Status instead.
// * The storage remembers its device type. kCpu is always available; other
//   devices allocate through their DeviceOps backend (device_ops.h), and
//   without one linked (the default build has no CUDA) asking for kCuda is
//   kUnimplemented. data<T>() of a device tensor is a device pointer for
//   kernels; GetDouble/SetDouble/FromValues are host-only (CopyTo first),
//   while Clone, SetZero, ToString and DescribeMismatch work on any device.
#ifndef ONEFLOW_SBP_STORAGE_LOCAL_TENSOR_H_
#define ONEFLOW_SBP_STORAGE_LOCAL_TENSOR_H_

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "absl/container/inlined_vector.h"
#include "absl/status/statusor.h"
#include "absl/types/span.h"
#include "oneflow_sbp/values/check.h"
#include "oneflow_sbp/values/data_type.h"
#include "oneflow_sbp/storage/element_type.h"
#include "oneflow_sbp/values/placement.h"
#include "oneflow_sbp/values/status_macros.h"

namespace oneflow_sbp {

using LocalDims = absl::InlinedVector<int64_t, 6>;

// "[2,0,3]"; "[]" for a scalar.
std::string DimsToString(absl::Span<const int64_t> dims);

// Element count of `dims`, or kInvalidArgument naming the dims if one is
// negative or the count (or its byte size at 8 bytes per element)
// overflows int64.
absl::StatusOr<int64_t> CheckedElemCount(absl::Span<const int64_t> dims);

// Row-major strides in elements (the last dim has stride 1).
LocalDims RowMajorStrides(absl::Span<const int64_t> dims);

// An aligned byte buffer on one device. Immutable size; never moves.
//
// CPU buffers come from a caching allocator: a freed buffer is kept (up to
// kMaxCachedBytes in all) and handed to the next allocation of the same
// padded size, as PyTorch's and OneFlow's allocators do. An eager training
// loop allocates the same shapes every step, and fresh large buffers cost a
// page fault per 4 KiB on first touch, which dominated boxing time before.
class Storage {
 public:
  static constexpr int64_t kAlignment = 64;
  static constexpr int64_t kMaxCachedBytes = int64_t{1} << 30;

  struct CacheStats {
    int64_t hits = 0;
    int64_t misses = 0;
    int64_t cached_bytes = 0;
  };
  static CacheStats cache_stats();
  // Frees every buffer in the shared cache (threads keep a small cache of
  // their own, returned to the shared one when they exit).
  static void ReleaseCache();

  // kInvalidArgument for a negative size, kUnimplemented for a device
  // without an allocator, kResourceExhausted if memory runs out. A zero
  // size allocates one aligned line, so data() is never null.
  static absl::StatusOr<std::shared_ptr<Storage>> Allocate(DeviceType device,
                                                           int64_t byte_size);
  // Never throws: a freed CPU buffer the cache cannot keep (full, or out
  // of memory for its lists) is freed.
  ~Storage();
  Storage(const Storage&) = delete;
  Storage& operator=(const Storage&) = delete;

  DeviceType device() const { return device_; }
  int64_t byte_size() const { return byte_size_; }
  void* data() { return data_; }
  const void* data() const { return data_; }

 private:
  Storage(DeviceType device, void* data, int64_t byte_size, int64_t padded)
      : device_(device), data_(data), byte_size_(byte_size), padded_(padded) {}
  // Wraps an allocated buffer; frees it and returns kResourceExhausted when
  // the wrapper itself cannot be allocated.
  static absl::StatusOr<std::shared_ptr<Storage>> Own(DeviceType device, void* data,
                                                      int64_t byte_size, int64_t padded);
  DeviceType device_;
  void* data_;
  int64_t byte_size_;
  int64_t padded_;
};

class LocalTensor {
 public:
  LocalTensor() = default;

  // Uninitialised contents. Errors as CheckedElemCount and Storage::Allocate.
  static absl::StatusOr<LocalTensor> Empty(DataType dtype, absl::Span<const int64_t> dims,
                                           DeviceType device = DeviceType::kCpu);
  // All zero bytes: 0 in every dtype, false for bool.
  static absl::StatusOr<LocalTensor> Zeros(DataType dtype, absl::Span<const int64_t> dims,
                                           DeviceType device = DeviceType::kCpu);
  // Every element `value` converted to dtype (ConvertElement rules).
  static absl::StatusOr<LocalTensor> Full(DataType dtype, absl::Span<const int64_t> dims,
                                          double value);
  // Row-major values converted to dtype; kInvalidArgument unless there is
  // exactly one value per element.
  static absl::StatusOr<LocalTensor> FromDoubles(DataType dtype, absl::Span<const int64_t> dims,
                                                 absl::Span<const double> values);
  // dtype from T (kDataTypeOf<T>); same count check. Takes a vector so that
  // std::vector<bool> works.
  template <typename T>
  static absl::StatusOr<LocalTensor> FromValues(absl::Span<const int64_t> dims,
                                                const std::vector<T>& values);

  // A deep copy (new storage, same dtype, dims and bytes). Requires defined().
  LocalTensor Clone() const;
  // The same dtype, dims and bytes on `device` (a copy even when the
  // device is the same). kUnimplemented without a backend for a device.
  absl::StatusOr<LocalTensor> CopyTo(DeviceType device) const;

  bool defined() const { return storage_ != nullptr; }
  DataType dtype() const { return dtype_; }
  DeviceType device() const;
  const LocalDims& dims() const { return dims_; }
  int rank() const { return static_cast<int>(dims_.size()); }
  int64_t dim(int i) const { return dims_[i]; }
  int64_t elem_cnt() const { return elem_cnt_; }
  int64_t byte_size() const { return elem_cnt_ * ByteSizeOf(dtype_); }

  // Typed element pointer; aborts unless T is dtype()'s element type.
  template <typename T>
  T* data() {
    OFS_CHECK(kDataTypeOf<T> == dtype_) << "data<" << DataTypeName(kDataTypeOf<T>)
                                        << ">() on a " << DataTypeName(dtype_) << " tensor";
    return static_cast<T*>(raw_data());
  }
  template <typename T>
  const T* data() const {
    OFS_CHECK(kDataTypeOf<T> == dtype_) << "data<" << DataTypeName(kDataTypeOf<T>)
                                        << ">() on a " << DataTypeName(dtype_) << " tensor";
    return static_cast<const T*>(raw_data());
  }
  void* raw_data() { return storage_ ? storage_->data() : nullptr; }
  const void* raw_data() const { return storage_ ? storage_->data() : nullptr; }

  // Element `i` (row-major) converted to / from double. Requires
  // 0 <= i < elem_cnt(). For tests, harnesses and debugging, not hot loops.
  double GetDouble(int64_t i) const;
  void SetDouble(int64_t i, double value);
  std::vector<double> ToDoubles() const;

  // Sets every byte to zero.
  void SetZero();

  // True if both handles share one storage.
  bool SharesStorageWith(const LocalTensor& other) const {
    return storage_ != nullptr && storage_ == other.storage_;
  }

  // "f32[2,3] {1, 2, 3, 4, 5, 6}", at most `max_elems` values then "...";
  // "undefined" for an undefined tensor.
  std::string ToString(int64_t max_elems = 32) const;

 private:
  DataType dtype_ = DataType::kFloat32;
  LocalDims dims_;
  int64_t elem_cnt_ = 0;
  std::shared_ptr<Storage> storage_;
};

// "" if `a` and `b` have the same dtype, dims and element values (NaN
// equals NaN; +0 equals -0), else the first difference in words:
// "dtype f32 vs f64", "dims [2,3] vs [3,2]", "element 4 [1,1]: 5 vs 6".
std::string DescribeMismatch(const LocalTensor& a, const LocalTensor& b);
inline bool ExactlyEqual(const LocalTensor& a, const LocalTensor& b) {
  return DescribeMismatch(a, b).empty();
}

// --- implementation -----------------------------------------------------------

template <typename T>
absl::StatusOr<LocalTensor> LocalTensor::FromValues(absl::Span<const int64_t> dims,
                                                    const std::vector<T>& values) {
  OFS_ASSIGN_OR_RETURN(LocalTensor t, Empty(kDataTypeOf<T>, dims));
  if (static_cast<int64_t>(values.size()) != t.elem_cnt()) {
    return absl::InvalidArgumentError(
        std::string("LocalTensor::FromValues: ") + std::to_string(values.size()) +
        " values for dims " + DimsToString(dims) + " (" + std::to_string(t.elem_cnt()) +
        " elements)");
  }
  T* out = t.template data<T>();
  for (size_t i = 0; i < values.size(); ++i) out[i] = values[i];
  return t;
}

}  // namespace oneflow_sbp

#endif  // ONEFLOW_SBP_STORAGE_LOCAL_TENSOR_H_
