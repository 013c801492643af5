// The vectorised reduction kernels (comm/reduce_op.h) against a
// scalar reference that computes each element on its own the way the
// kernels were first written (Eigen's f16/bf16 conversions, std::isnan),
// bit for bit: every dtype x {sum, max, min}, odd sizes, unaligned
// buffers, in place, and out aliasing either operand.
#include <cmath>
#include <cstdint>
#include <cstring>
#include <random>
#include <string>
#include <vector>

#include "Eigen/Core"
#include "absl/strings/str_cat.h"
#include "gtest/gtest.h"
#include "oneflow_sbp/values/data_type.h"
#include "comm/reduce_half_simd.h"
#include "comm/reduce_op.h"

namespace oneflow_sbp::comm {
namespace {

constexpr ReduceOp kOps[] = {ReduceOp::kSum, ReduceOp::kMax, ReduceOp::kMin};

template <typename F>
F RefFloatOp(ReduceOp op, F a, F b) {
  if (op == ReduceOp::kSum) return a + b;
  if (std::isnan(a)) return a;
  if (std::isnan(b)) return b;
  if (op == ReduceOp::kMax) return a < b ? b : a;
  return b < a ? b : a;
}

template <typename T>
T RefIntOp(ReduceOp op, T a, T b) {
  using U = std::make_unsigned_t<T>;
  if (op == ReduceOp::kSum) return static_cast<T>(static_cast<U>(a) + static_cast<U>(b));
  if (op == ReduceOp::kMax) return a < b ? b : a;
  return b < a ? b : a;
}

// One element of op(a, b), from and to raw bytes.
void RefOne(ReduceOp op, DataType dtype, const char* a, const char* b, char* out) {
  auto io = [&](auto tag, auto f) {
    using T = decltype(tag);
    T x, y;
    std::memcpy(&x, a, sizeof(T));
    std::memcpy(&y, b, sizeof(T));
    const T r = f(x, y);
    std::memcpy(out, &r, sizeof(T));
  };
  switch (dtype) {
    case DataType::kFloat16:
      return io(Eigen::half(), [&](Eigen::half x, Eigen::half y) {
        return Eigen::half(RefFloatOp<float>(op, float(x), float(y)));
      });
    case DataType::kBFloat16:
      return io(Eigen::bfloat16(), [&](Eigen::bfloat16 x, Eigen::bfloat16 y) {
        return Eigen::bfloat16(RefFloatOp<float>(op, float(x), float(y)));
      });
    case DataType::kFloat32:
      return io(float(), [&](float x, float y) { return RefFloatOp(op, x, y); });
    case DataType::kFloat64:
      return io(double(), [&](double x, double y) { return RefFloatOp(op, x, y); });
    case DataType::kInt8:
      return io(int8_t(), [&](int8_t x, int8_t y) { return RefIntOp(op, x, y); });
    case DataType::kInt32:
      return io(int32_t(), [&](int32_t x, int32_t y) { return RefIntOp(op, x, y); });
    case DataType::kInt64:
      return io(int64_t(), [&](int64_t x, int64_t y) { return RefIntOp(op, x, y); });
    case DataType::kUInt8:
      return io(uint8_t(), [&](uint8_t x, uint8_t y) { return RefIntOp(op, x, y); });
    case DataType::kBool:
      return io(uint8_t(), [&](uint8_t x, uint8_t y) {
        return op == ReduceOp::kMin ? uint8_t{x != 0 && y != 0} : uint8_t{x != 0 || y != 0};
      });
  }
}

std::vector<char> RefReduce(ReduceOp op, DataType dtype, const char* a, const char* b,
                            int64_t count) {
  const int64_t es = ByteSizeOf(dtype);
  std::vector<char> out(count * es);
  for (int64_t i = 0; i < count; ++i) RefOne(op, dtype, a + i * es, b + i * es, &out[i * es]);
  return out;
}

bool IsNaN(DataType dtype, const char* p) {
  switch (dtype) {
    case DataType::kFloat16: {
      uint16_t h;
      std::memcpy(&h, p, 2);
      return (h & 0x7fff) > 0x7c00;
    }
    case DataType::kBFloat16: {
      uint16_t h;
      std::memcpy(&h, p, 2);
      return (h & 0x7fff) > 0x7f80;
    }
    case DataType::kFloat32: {
      float f;
      std::memcpy(&f, p, 4);
      return std::isnan(f);
    }
    case DataType::kFloat64: {
      double d;
      std::memcpy(&d, p, 8);
      return std::isnan(d);
    }
    default:
      return false;
  }
}

// Counts the elements of `got` that differ from the reference op(a, b).
// Bit for bit, except that a sum of two NaNs need only be a NaN: IEEE
// leaves its payload and sign open, and compilers may swap the operands
// of an addition, so no build promised more.
int64_t Mismatches(ReduceOp op, DataType dtype, const char* a, const char* b, const char* got,
                   int64_t count) {
  const int64_t es = ByteSizeOf(dtype);
  const std::vector<char> want = RefReduce(op, dtype, a, b, count);
  int64_t bad = 0;
  for (int64_t i = 0; i < count; ++i) {
    const int64_t at = i * es;
    if (op == ReduceOp::kSum && IsNaN(dtype, a + at) && IsNaN(dtype, b + at)) {
      bad += IsNaN(dtype, got + at) ? 0 : 1;
    } else {
      bad += std::memcmp(got + at, &want[at], es) == 0 ? 0 : 1;
    }
  }
  return bad;
}

// Random bytes: every bit pattern, so floats include NaNs (of both signs
// and many payloads), infinities, subnormals and signed zeros.
std::vector<char> RandomBytes(std::mt19937& rng, int64_t bytes) {
  std::vector<char> v(bytes);
  for (char& c : v) c = static_cast<char>(rng() & 0xff);
  return v;
}

std::string Name(ReduceOp op, DataType dtype, int64_t count, int offset, const char* mode) {
  return absl::StrCat(DataTypeName(dtype), " ", ReduceOpName(op), " count ", count, " offset ",
                      offset, " ", mode);
}

TEST(ReduceOp, EveryDtypeAndOpMatchesTheScalarReference) {
  std::mt19937 rng(25);
  for (int t = 0; t < kNumDataTypes; ++t) {
    const DataType dtype = static_cast<DataType>(t);
    const int64_t es = ByteSizeOf(dtype);
    for (ReduceOp op : kOps) {
      for (int64_t count : {0, 1, 3, 7, 15, 16, 17, 31, 33, 63, 64, 65, 129, 1000, 4099}) {
        // offset 0: aligned; 1: every buffer one byte off its type's
        // alignment (the scalar path; same results).
        for (int offset : {0, 1}) {
          const int64_t bytes = count * es;
          std::vector<char> a_store = RandomBytes(rng, bytes + 16);
          std::vector<char> b_store = RandomBytes(rng, bytes + 16);
          // Eight-byte aligned bases, so offset 0 is aligned for every type.
          std::vector<double> a8((bytes + 16) / 8 + 2), b8((bytes + 16) / 8 + 2),
              o8((bytes + 16) / 8 + 2);
          char* a = reinterpret_cast<char*>(a8.data()) + offset;
          char* b = reinterpret_cast<char*>(b8.data()) + offset;
          char* o = reinterpret_cast<char*>(o8.data()) + offset;
          std::memcpy(a, a_store.data(), bytes);
          std::memcpy(b, b_store.data(), bytes);
          const std::vector<char> a_copy(a, a + bytes);
          const std::vector<char> b_copy(b, b + bytes);
          auto check = [&](const char* got, bool self, const char* mode) {
            const char* rhs = self ? a_copy.data() : b_copy.data();
            EXPECT_EQ(0, Mismatches(op, dtype, a_copy.data(), rhs, got, count))
                << Name(op, dtype, count, offset, mode);
          };
          // Three distinct buffers.
          ReduceTo(op, dtype, a, b, o, count);
          check(o, false, "a,b->out");
          // out == a (the ReduceInto form).
          std::memcpy(o, a, bytes);
          ReduceInto(op, dtype, b, o, count);
          check(o, false, "inout=a");
          // out == b: the operand order is kept (NaN payloads show it).
          std::memcpy(o, b, bytes);
          ReduceTo(op, dtype, a, o, o, count);
          check(o, false, "out=b");
          // Fully in place: in == inout.
          std::memcpy(o, a, bytes);
          ReduceInto(op, dtype, o, o, count);
          check(o, true, "in=inout");
          // a == b, separate out.
          ReduceTo(op, dtype, a, a, o, count);
          check(o, true, "a=b->out");
        }
      }
    }
  }
}

// Every f16 and bf16 value as the left operand against a spread of right
// operands (every 331st pattern, so zeros, subnormals, infinities, NaNs and
// rounding ties all come up): the conversions are exact and round like
// Eigen's.
// Runs the 16-bit sweep with the AVX2/F16C loops (where the CPU has them)
// and with the portable ones.
class SixteenBit : public ::testing::TestWithParam<bool> {
 protected:
  void SetUp() override {
    if (GetParam() && !HasReduceHalfSimd()) GTEST_SKIP() << "no AVX2+F16C on this CPU";
    SetReduceHalfSimdEnabledForTesting(GetParam());
  }
  void TearDown() override { SetReduceHalfSimdEnabledForTesting(true); }
};

TEST_P(SixteenBit, TypesRoundLikeEigenOnEveryValue) {
  for (DataType dtype : {DataType::kFloat16, DataType::kBFloat16}) {
    std::vector<uint16_t> a(65536);
    for (int i = 0; i < 65536; ++i) a[i] = static_cast<uint16_t>(i);
    for (int step = 0; step < 65536; step += 331) {
      std::vector<uint16_t> b(65536, static_cast<uint16_t>(step));
      for (ReduceOp op : kOps) {
        std::vector<uint16_t> out(65536);
        ReduceTo(op, dtype, a.data(), b.data(), out.data(), 65536);
        ASSERT_EQ(0, Mismatches(op, dtype, reinterpret_cast<const char*>(a.data()),
                                reinterpret_cast<const char*>(b.data()),
                                reinterpret_cast<const char*>(out.data()), 65536))
            << DataTypeName(dtype) << " " << ReduceOpName(op) << " against 0x" << std::hex << step;
      }
    }
  }
}

// The vector loops and the portable ones give the same bits on every
// layout the contract allows (odd sizes, unaligned, aliased), NaN payloads
// included.
TEST_P(SixteenBit, AliasedAndUnalignedBuffersToo) {
  std::mt19937 rng(7);
  for (DataType dtype : {DataType::kFloat16, DataType::kBFloat16}) {
    for (ReduceOp op : kOps) {
      for (int64_t count : {1, 7, 8, 9, 15, 16, 17, 1001}) {
        for (int offset : {0, 1}) {
          std::vector<char> store_a = RandomBytes(rng, 2 * count + 2);
          std::vector<char> store_b = RandomBytes(rng, 2 * count + 2);
          char* a = store_a.data() + offset;
          char* b = store_b.data() + offset;
          std::vector<char> out(2 * count + 2);
          ReduceTo(op, dtype, a, b, out.data() + offset, count);
          EXPECT_EQ(0, Mismatches(op, dtype, a, b, out.data() + offset, count))
              << Name(op, dtype, count, offset, "a,b->out");
          const std::vector<char> a_copy(a, a + 2 * count);
          ReduceInto(op, dtype, b, a, count);
          EXPECT_EQ(0, Mismatches(op, dtype, a_copy.data(), b, a, count))
              << Name(op, dtype, count, offset, "inout=a");
        }
      }
    }
  }
}

INSTANTIATE_TEST_SUITE_P(Loops, SixteenBit, ::testing::Bool(),
                         [](const ::testing::TestParamInfo<bool>& i) {
                           return std::string(i.param ? "Simd" : "Portable");
                         });

TEST(ReduceOp, SumsWrapAndMaxPropagatesNaN) {
  int8_t i8[2] = {127, -128};
  const int8_t one[2] = {1, -1};
  ReduceInto(ReduceOp::kSum, DataType::kInt8, one, i8, 2);
  EXPECT_EQ(i8[0], -128);
  EXPECT_EQ(i8[1], 127);
  float f[3] = {1.f, NAN, -0.f};
  const float g[3] = {NAN, 2.f, 0.f};
  ReduceInto(ReduceOp::kMax, DataType::kFloat32, g, f, 3);
  EXPECT_TRUE(std::isnan(f[0]));
  EXPECT_TRUE(std::isnan(f[1]));
  EXPECT_TRUE(std::signbit(f[2]));  // max(-0, +0) keeps the left operand
}

}  // namespace
}  // namespace oneflow_sbp::comm
