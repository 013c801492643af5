// Philox4x32-10, the counter-based generator of Salmon et al., "Parallel
// Random Numbers: As Easy as 1, 2, 3" (SC'11), and the element-indexed
// stream dropout draws from.
//
// Example:
//   PhiloxBlock r = Philox4x32_10({{0, 0, 0, 0}}, 0, 0);
//   // r.v == {0x6627e8d5, 0xe169c58d, 0xbc57ac4c, 0x9b00dbd8}  (Random123 KAT)
//   uint32_t bits = PhiloxElementBits(/*seed=*/7, /*index=*/12345);
//   bool keep = DropoutKeeps(bits, DropoutThreshold(0.1));
//
// Why counter-based: the value for logical element i is a pure function of
// (seed, i), so every rank draws the bits of exactly the elements it holds,
// whatever the layout, and a CUDA kernel computes the same bits per thread.
// Everything here is header-only integer arithmetic, marked host+device
// under nvcc.
//
// Element stream: element i uses block i / 4, lane i % 4, with counter
// {lo32(i / 4), hi32(i / 4), 0, 0} and key {lo32(seed), hi32(seed)}.
// Dropout keeps element i iff (bits >> 8) >= DropoutThreshold(rate), a
// 24-bit integer comparison (no float rounding to disagree on).
#ifndef KERNELS_PHILOX_H_
#define KERNELS_PHILOX_H_

#include <cstdint>

#if defined(__CUDACC__)
#define OFS_HOST_DEVICE __host__ __device__
#else
#define OFS_HOST_DEVICE
#endif

namespace oneflow_sbp::kernels {

struct PhiloxBlock {
  uint32_t v[4];
};

namespace philox_internal {
constexpr uint32_t kMul0 = 0xD2511F53u;
constexpr uint32_t kMul1 = 0xCD9E8D57u;
constexpr uint32_t kWeyl0 = 0x9E3779B9u;  // golden ratio
constexpr uint32_t kWeyl1 = 0xBB67AE85u;  // sqrt(3) - 1

OFS_HOST_DEVICE inline void MulHiLo(uint32_t a, uint32_t b, uint32_t* hi, uint32_t* lo) {
  const uint64_t p = static_cast<uint64_t>(a) * b;
  *hi = static_cast<uint32_t>(p >> 32);
  *lo = static_cast<uint32_t>(p);
}
}  // namespace philox_internal

// Ten rounds of Philox4x32 on `counter` with key (key0, key1).
OFS_HOST_DEVICE inline PhiloxBlock Philox4x32_10(PhiloxBlock counter, uint32_t key0,
                                                uint32_t key1) {
  using namespace philox_internal;
  uint32_t c0 = counter.v[0], c1 = counter.v[1], c2 = counter.v[2], c3 = counter.v[3];
  for (int round = 0; round < 10; ++round) {
    if (round > 0) {
      key0 += kWeyl0;
      key1 += kWeyl1;
    }
    uint32_t hi0, lo0, hi1, lo1;
    MulHiLo(kMul0, c0, &hi0, &lo0);
    MulHiLo(kMul1, c2, &hi1, &lo1);
    const uint32_t n0 = hi1 ^ c1 ^ key0;
    const uint32_t n2 = hi0 ^ c3 ^ key1;
    c0 = n0;
    c1 = lo1;
    c2 = n2;
    c3 = lo0;
  }
  return PhiloxBlock{{c0, c1, c2, c3}};
}

// The block that holds element `index`'s bits (lane index % 4).
OFS_HOST_DEVICE inline PhiloxBlock PhiloxElementBlock(uint64_t seed, uint64_t index) {
  const uint64_t block = index / 4;
  return Philox4x32_10(
      PhiloxBlock{{static_cast<uint32_t>(block), static_cast<uint32_t>(block >> 32), 0u, 0u}},
      static_cast<uint32_t>(seed), static_cast<uint32_t>(seed >> 32));
}

// The 32 random bits of logical element `index` under `seed`.
OFS_HOST_DEVICE inline uint32_t PhiloxElementBits(uint64_t seed, uint64_t index) {
  return PhiloxElementBlock(seed, index).v[index % 4];
}

// ceil(rate * 2^24), clamped to [0, 2^24]: rate 0 keeps everything, rate 1
// nothing. NaN counts as 0.
inline uint32_t DropoutThreshold(double rate) {
  constexpr double kScale = 16777216.0;  // 2^24
  if (!(rate > 0.0)) return 0;
  if (rate >= 1.0) return 1u << 24;
  double t = rate * kScale;
  uint32_t ti = static_cast<uint32_t>(t);
  if (static_cast<double>(ti) < t) ++ti;
  return ti;
}

OFS_HOST_DEVICE inline bool DropoutKeeps(uint32_t bits, uint32_t threshold) {
  return (bits >> 8) >= threshold;
}

}  // namespace oneflow_sbp::kernels

#endif  // KERNELS_PHILOX_H_
