#include "runtime/comm/reduce_op.h"

#include <cmath>
#include <cstring>
#include <type_traits>

#include "Eigen/Core"

namespace oneflow_sbp::comm {
namespace {

// Integers: wrap through the unsigned type (signed overflow is undefined).
template <typename T>
T IntSum(T a, T b) {
  using U = std::make_unsigned_t<T>;
  return static_cast<T>(static_cast<U>(a) + static_cast<U>(b));
}

// Floats computed as F (f32 for the 16-bit types): NaN on either side wins.
template <typename F>
F FloatMax(F a, F b) {
  if (std::isnan(a)) return a;
  if (std::isnan(b)) return b;
  return a < b ? b : a;
}
template <typename F>
F FloatMin(F a, F b) {
  if (std::isnan(a)) return a;
  if (std::isnan(b)) return b;
  return b < a ? b : a;
}

// One loop per (type, op); `f` is inlined.
template <typename T, typename F>
void Apply(const void* in, void* inout, int64_t count, F f) {
  const char* src = static_cast<const char*>(in);
  char* dst = static_cast<char*>(inout);
  for (int64_t i = 0; i < count; ++i) {
    // Buffers come from users and from byte offsets of chunks, so they may
    // be unaligned for T; memcpy of sizeof(T) compiles to a plain load.
    T a;
    T b;
    std::memcpy(&a, dst + i * sizeof(T), sizeof(T));
    std::memcpy(&b, src + i * sizeof(T), sizeof(T));
    const T r = f(a, b);
    std::memcpy(dst + i * sizeof(T), &r, sizeof(T));
  }
}

template <typename T>
void ReduceInt(ReduceOp op, const void* in, void* inout, int64_t count) {
  switch (op) {
    case ReduceOp::kSum:
      return Apply<T>(in, inout, count, [](T a, T b) { return IntSum(a, b); });
    case ReduceOp::kMax:
      return Apply<T>(in, inout, count, [](T a, T b) { return a < b ? b : a; });
    case ReduceOp::kMin:
      return Apply<T>(in, inout, count, [](T a, T b) { return b < a ? b : a; });
  }
}

// T is stored, F computes (F = T for f32/f64, float for f16/bf16).
template <typename T, typename F>
void ReduceFloat(ReduceOp op, const void* in, void* inout, int64_t count) {
  switch (op) {
    case ReduceOp::kSum:
      return Apply<T>(in, inout, count,
                      [](T a, T b) { return T(static_cast<F>(a) + static_cast<F>(b)); });
    case ReduceOp::kMax:
      return Apply<T>(in, inout, count, [](T a, T b) {
        return T(FloatMax(static_cast<F>(a), static_cast<F>(b)));
      });
    case ReduceOp::kMin:
      return Apply<T>(in, inout, count, [](T a, T b) {
        return T(FloatMin(static_cast<F>(a), static_cast<F>(b)));
      });
  }
}

void ReduceBool(ReduceOp op, const void* in, void* inout, int64_t count) {
  // Any nonzero byte is true; results are stored as 0 or 1.
  if (op == ReduceOp::kMin) {
    Apply<uint8_t>(in, inout, count,
                   [](uint8_t a, uint8_t b) { return uint8_t{a != 0 && b != 0}; });
  } else {
    Apply<uint8_t>(in, inout, count,
                   [](uint8_t a, uint8_t b) { return uint8_t{a != 0 || b != 0}; });
  }
}

}  // namespace

absl::string_view ReduceOpName(ReduceOp op) {
  switch (op) {
    case ReduceOp::kSum:
      return "sum";
    case ReduceOp::kMax:
      return "max";
    case ReduceOp::kMin:
      return "min";
  }
  return "unknown";
}

void ReduceInto(ReduceOp op, DataType dtype, const void* in, void* inout, int64_t count) {
  if (count <= 0) return;
  switch (dtype) {
    case DataType::kFloat16:
      return ReduceFloat<Eigen::half, float>(op, in, inout, count);
    case DataType::kBFloat16:
      return ReduceFloat<Eigen::bfloat16, float>(op, in, inout, count);
    case DataType::kFloat32:
      return ReduceFloat<float, float>(op, in, inout, count);
    case DataType::kFloat64:
      return ReduceFloat<double, double>(op, in, inout, count);
    case DataType::kInt8:
      return ReduceInt<int8_t>(op, in, inout, count);
    case DataType::kInt32:
      return ReduceInt<int32_t>(op, in, inout, count);
    case DataType::kInt64:
      return ReduceInt<int64_t>(op, in, inout, count);
    case DataType::kUInt8:
      return ReduceInt<uint8_t>(op, in, inout, count);
    case DataType::kBool:
      return ReduceBool(op, in, inout, count);
  }
}

}  // namespace oneflow_sbp::comm
