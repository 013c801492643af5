// Integer arithmetic without undefined behaviour: two's-complement
// wrap-around for + - * and negation (as PyTorch and NumPy integer tensors
// behave), and checked division helpers. Floating types pass through.
// Host and device: the CUDA kernels (kernels/cuda/) call the same
// functions, so both devices share one definition of the integer results.
#ifndef KERNELS_COMMON_INT_ARITH_H_
#define KERNELS_COMMON_INT_ARITH_H_

#include <cmath>
#include <type_traits>

#ifdef __CUDACC__
#define OFS_HOST_DEVICE __host__ __device__
#else
#define OFS_HOST_DEVICE
#endif

namespace oneflow_sbp::kernels {

template <typename T>
OFS_HOST_DEVICE T WrapAdd(T a, T b) {
  if constexpr (std::is_integral_v<T>) {
    using U = std::make_unsigned_t<T>;
    return static_cast<T>(static_cast<U>(a) + static_cast<U>(b));
  } else {
    return a + b;
  }
}

template <typename T>
OFS_HOST_DEVICE T WrapSub(T a, T b) {
  if constexpr (std::is_integral_v<T>) {
    using U = std::make_unsigned_t<T>;
    return static_cast<T>(static_cast<U>(a) - static_cast<U>(b));
  } else {
    return a - b;
  }
}

template <typename T>
OFS_HOST_DEVICE T WrapMul(T a, T b) {
  if constexpr (std::is_integral_v<T>) {
    using U = std::make_unsigned_t<T>;
    return static_cast<T>(static_cast<U>(a) * static_cast<U>(b));
  } else {
    return a * b;
  }
}

template <typename T>
OFS_HOST_DEVICE T WrapNeg(T a) {
  return WrapSub(T(0), a);
}

// Floor division (Python's //) for b != 0; the caller rejects b == 0.
template <typename T>
OFS_HOST_DEVICE T FloorDiv(T a, T b) {
  if constexpr (std::is_integral_v<T>) {
    if (b == T(-1)) return WrapNeg(a);  // lowest() / -1 would overflow
    T q = a / b;
    if ((a % b != 0) && ((a < 0) != (b < 0))) --q;
    return q;
  } else {
    return std::floor(a / b);
  }
}

// C's fmod / %: the result has the sign of a (torch.fmod). b != 0 for
// integers; the caller rejects b == 0.
template <typename T>
OFS_HOST_DEVICE T Fmod(T a, T b) {
  if constexpr (std::is_integral_v<T>) {
    return b == T(-1) ? T(0) : static_cast<T>(a % b);
  } else {
    return std::fmod(a, b);
  }
}

// a^b for integers with b >= 0 (repeated squaring, wrapping).
template <typename T>
OFS_HOST_DEVICE T IntPow(T a, T b) {
  T result = 1;
  while (b > 0) {
    if (b & 1) result = WrapMul(result, a);
    a = WrapMul(a, a);
    b >>= 1;
  }
  return result;
}

}  // namespace oneflow_sbp::kernels

#endif  // KERNELS_COMMON_INT_ARITH_H_
