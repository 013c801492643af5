#include "comm/reduce_op.h"

#include "comm/reduce_half_simd.h"

#include <cstdint>
#include <cstring>
#include <type_traits>


namespace oneflow_sbp::comm {
namespace {

// ---- Element types: how a stored value is loaded for computing and
// stored back. Every function is branch-free so that a block of them
// vectorises (selects, not jumps).

uint32_t FloatBits(float f) {
  uint32_t u;
  std::memcpy(&u, &f, sizeof(u));
  return u;
}
float BitsFloat(uint32_t u) {
  float f;
  std::memcpy(&f, &u, sizeof(f));
  return f;
}

// Stored as T, computed as T.
template <typename T>
struct Plain {
  using Stored = T;
  using Compute = T;
  static Compute Load(Stored v) { return v; }
  static Stored Store(Compute v) { return v; }
};

// bfloat16: the high half of an f32.
struct BF16 {
  using Stored = uint16_t;
  using Compute = float;
  static float Load(uint16_t v) { return BitsFloat(uint32_t{v} << 16); }
  static uint16_t Store(float f) {
    const uint32_t u = FloatBits(f);
    // Round to nearest even on the 16 dropped bits.
    const uint32_t rounded = (u + 0x7fffu + ((u >> 16) & 1u)) >> 16;
    const uint32_t quiet_nan = ((u >> 16) & 0x8000u) | 0x7fc0u;
    const bool nan = (u & 0x7fffffffu) > 0x7f800000u;
    return static_cast<uint16_t>(nan ? quiet_nan : rounded);
  }
};

// IEEE half: 1 sign, 5 exponent, 10 mantissa bits.
struct F16 {
  using Stored = uint16_t;
  using Compute = float;
  static float Load(uint16_t h) {
    const uint32_t sign = uint32_t{h & 0x8000u} << 16;
    const uint32_t body = uint32_t{h & 0x7fffu} << 13;  // exponent and mantissa in f32 place
    const uint32_t exp = body & 0x0f800000u;
    // Normal numbers: rebias the exponent (15 -> 127).
    const uint32_t normal = body + ((127u - 15u) << 23);
    // Inf and NaN: the exponent becomes all ones.
    const uint32_t special = normal + ((128u - 16u) << 23);
    // Subnormals (and zero): value = mantissa * 2^-24, exact in f32 as
    // (2^-14 + mantissa * 2^-24) - 2^-14.
    const float sub = BitsFloat(normal + (1u << 23)) - BitsFloat(113u << 23);
    const uint32_t magnitude = exp == 0x0f800000u ? special
                               : exp == 0         ? FloatBits(sub)
                                                  : normal;
    return BitsFloat(sign | magnitude);
  }
  static uint16_t Store(float f) {
    const uint32_t u = FloatBits(f);
    const uint32_t sign = (u >> 16) & 0x8000u;
    const uint32_t a = u & 0x7fffffffu;
    // Too large for a half (|f| >= 65520 rounds to inf), inf, or NaN.
    const uint32_t big = a > 0x7f800000u ? 0x7e00u : 0x7c00u;
    // Result a subnormal half (|f| < 2^-14): adding 0.5 (2^-1) aligns the
    // mantissa so that the FPU's own round-to-nearest-even does the work.
    const float magic = BitsFloat(126u << 23);
    const uint32_t sub = FloatBits(BitsFloat(a) + magic) - FloatBits(magic);
    // Normal: rebias (127 -> 15) and round the 13 dropped bits to nearest
    // even.
    const uint32_t odd = (a >> 13) & 1u;
    const uint32_t normal = (a + ((15u - 127u) << 23) + 0xfffu + odd) >> 13;
    const uint32_t magnitude = a >= (143u << 23) ? big : a < (113u << 23) ? sub : normal;
    return static_cast<uint16_t>(sign | magnitude);
  }
};

// ---- Ops on the computed type.

// Integers wrap: the add goes through the unsigned type, where overflow is
// defined (the same rule as the add kernel's; comm sits below
// kernels in the layering, so it is not shared from there).
template <typename C>
struct SumOp {
  static C Apply(C a, C b) {
    if constexpr (std::is_integral_v<C> && !std::is_same_v<C, bool>) {
      using U = std::make_unsigned_t<C>;
      return static_cast<C>(static_cast<U>(a) + static_cast<U>(b));
    } else {
      return a + b;
    }
  }
};

// Max (kMax) or min. Floats: NaN on either side wins (the left one if both
// are NaN).
template <typename C, bool kMax>
struct ExtremumOp {
  static C Apply(C a, C b) {
    C r = (kMax ? a < b : b < a) ? b : a;
    if constexpr (!std::is_integral_v<C>) {
      r = b != b ? b : r;
      r = a != a ? a : r;
    }
    return r;
  }
};

// Bool: any nonzero byte is true; results are 0 or 1.
struct OrOp {
  static uint8_t Apply(uint8_t a, uint8_t b) { return static_cast<uint8_t>((a | b) != 0); }
};
struct AndOp {
  static uint8_t Apply(uint8_t a, uint8_t b) {
    return static_cast<uint8_t>((a != 0) & (b != 0));
  }
};

// ---- Loops. Blocks of a fixed element count (64 bytes of stored values)
// give the vectoriser a trip count it knows, at any optimisation level;
// the tail runs element by element.

template <typename E, typename Op>
typename E::Stored One(typename E::Stored a, typename E::Stored b) {
  return E::Store(Op::Apply(E::Load(a), E::Load(b)));
}

template <typename E>
constexpr int64_t kBlock = 64 / sizeof(typename E::Stored);

// out = op(a, b), three distinct buffers (a and b may be the same buffer:
// both are only read).
template <typename E, typename Op>
void Three(const typename E::Stored* __restrict a, const typename E::Stored* __restrict b,
           typename E::Stored* __restrict out, int64_t n) {
  int64_t i = 0;
  for (; i + kBlock<E> <= n; i += kBlock<E>) {
    for (int64_t j = 0; j < kBlock<E>; ++j) out[i + j] = One<E, Op>(a[i + j], b[i + j]);
  }
  for (; i < n; ++i) out[i] = One<E, Op>(a[i], b[i]);
}

// acc = op(acc, in) (kAccFirst) or acc = op(in, acc), acc and in distinct.
template <typename E, typename Op, bool kAccFirst>
void Two(typename E::Stored* __restrict acc, const typename E::Stored* __restrict in, int64_t n) {
  auto f = [](typename E::Stored x, typename E::Stored y) {
    return kAccFirst ? One<E, Op>(x, y) : One<E, Op>(y, x);
  };
  int64_t i = 0;
  for (; i + kBlock<E> <= n; i += kBlock<E>) {
    for (int64_t j = 0; j < kBlock<E>; ++j) acc[i + j] = f(acc[i + j], in[i + j]);
  }
  for (; i < n; ++i) acc[i] = f(acc[i], in[i]);
}

// Any layout the contract allows (unaligned buffers, a == b == out):
// element by element through memcpy, which makes no alignment or
// aliasing assumption.
template <typename E, typename Op>
void Scalar(const char* a, const char* b, char* out, int64_t n) {
  using S = typename E::Stored;
  for (int64_t i = 0; i < n; ++i) {
    S x;
    S y;
    std::memcpy(&x, a + i * sizeof(S), sizeof(S));
    std::memcpy(&y, b + i * sizeof(S), sizeof(S));
    const S r = One<E, Op>(x, y);
    std::memcpy(out + i * sizeof(S), &r, sizeof(S));
  }
}

bool Aligned(const void* p, size_t alignment) {
  return reinterpret_cast<uintptr_t>(p) % alignment == 0;
}

// Picks the loop for the buffers' layout, once per call.
template <typename E, typename Op>
void Run(const void* a, const void* b, void* out, int64_t n) {
  using S = typename E::Stored;
  const size_t align = alignof(S);
  if (Aligned(a, align) && Aligned(b, align) && Aligned(out, align)) {
    if (out == a && out != b) {
      return Two<E, Op, true>(static_cast<S*>(out), static_cast<const S*>(b), n);
    }
    if (out == b && out != a) {
      return Two<E, Op, false>(static_cast<S*>(out), static_cast<const S*>(a), n);
    }
    if (out != a && out != b) {
      return Three<E, Op>(static_cast<const S*>(a), static_cast<const S*>(b), static_cast<S*>(out),
                          n);
    }
  }
  Scalar<E, Op>(static_cast<const char*>(a), static_cast<const char*>(b), static_cast<char*>(out),
                n);
}

template <typename E>
void RunNumeric(ReduceOp op, const void* a, const void* b, void* out, int64_t n) {
  using C = typename E::Compute;
  switch (op) {
    case ReduceOp::kSum:
      return Run<E, SumOp<C>>(a, b, out, n);
    case ReduceOp::kMax:
      return Run<E, ExtremumOp<C, true>>(a, b, out, n);
    case ReduceOp::kMin:
      return Run<E, ExtremumOp<C, false>>(a, b, out, n);
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

void ReduceTo(ReduceOp op, DataType dtype, const void* a, const void* b, void* out,
              int64_t count) {
  if (count <= 0) return;
  // f16 and bf16 with AVX2 (+F16C) where the CPU has them: the same bits.
  if (ReduceHalfSimd(op, dtype, a, b, out, count)) return;
  switch (dtype) {
    case DataType::kFloat16:
      return RunNumeric<F16>(op, a, b, out, count);
    case DataType::kBFloat16:
      return RunNumeric<BF16>(op, a, b, out, count);
    case DataType::kFloat32:
      return RunNumeric<Plain<float>>(op, a, b, out, count);
    case DataType::kFloat64:
      return RunNumeric<Plain<double>>(op, a, b, out, count);
    case DataType::kInt8:
      return RunNumeric<Plain<int8_t>>(op, a, b, out, count);
    case DataType::kInt32:
      return RunNumeric<Plain<int32_t>>(op, a, b, out, count);
    case DataType::kInt64:
      return RunNumeric<Plain<int64_t>>(op, a, b, out, count);
    case DataType::kUInt8:
      return RunNumeric<Plain<uint8_t>>(op, a, b, out, count);
    case DataType::kBool:
      if (op == ReduceOp::kMin) return Run<Plain<uint8_t>, AndOp>(a, b, out, count);
      return Run<Plain<uint8_t>, OrOp>(a, b, out, count);
  }
}

void ReduceInto(ReduceOp op, DataType dtype, const void* in, void* inout, int64_t count) {
  ReduceTo(op, dtype, inout, in, inout, count);
}

}  // namespace oneflow_sbp::comm
