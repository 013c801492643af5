// The CUDA unary (abs negative relu sign square) and broadcasting binary
// (add sub mul maximum minimum pow) kernels on i32 and i64 against the CPU
// kernels, bit for bit (GPU only; main() prints "SKIPPED: no CUDA device"
// without one): the wrap-around cases at INT_MIN / INT_MAX, same-shape
// operands (the 16-byte vector path and its tail), broadcast operands, a
// split layout, and the error cases, which must fail on both devices with
// the same status.
#include <cstdint>
#include <cstring>
#include <limits>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_replace.h"
#include "gtest/gtest.h"
#include "oneflow_sbp/storage/cuda/cuda_device.h"
#include "oneflow_sbp/storage/local_tensor.h"
#include "kernels/cuda/cuda_launch.h"
#include "tests/kernels/cuda_compare.h"
#include "tests/support/kernel_test_util.h"

namespace oneflow_sbp {
namespace {

using testing::Case;
using testing::IntTensor;
using testing::RunOnRank;

const DataType kInts[] = {DataType::kInt32, DataType::kInt64};

// The element `i` of an integer tensor as int64.
int64_t At(const LocalTensor& t, int64_t i) {
  return t.dtype() == DataType::kInt32 ? t.data<int32_t>()[i] : t.data<int64_t>()[i];
}

// "" when rank `rank` of `ranks` gets byte-identical outputs on the CPU and
// on CUDA (CompareTensors compares in double, which cannot tell i64 values
// near 2^63 apart); else the first difference.
std::string ExactlyAsCpu(const Case& c, const std::vector<std::string>& signature,
                         const std::string& ranks = "0", int64_t rank = 0) {
  absl::StatusOr<std::vector<LocalTensor>> want =
      RunOnRank(c.op, c.inputs, c.attrs, "cpu:" + ranks, signature, rank);
  if (!want.ok()) return "cpu: " + want.status().ToString();
  absl::StatusOr<std::vector<LocalTensor>> got = RunOnRank(
      c.op, c.inputs, c.attrs, "cuda:" + ranks, signature, rank, DeviceType::kCuda);
  if (!got.ok()) return "cuda: " + got.status().ToString();
  for (size_t o = 0; o < want->size(); ++o) {
    const LocalTensor& w = (*want)[o];
    const LocalTensor& g = (*got)[o];
    if (w.dtype() != g.dtype() || w.dims() != g.dims()) {
      return absl::StrCat(c.op, " output ", o, ": dtype or dims differ");
    }
    for (int64_t i = 0; i < w.elem_cnt(); ++i) {
      if (At(g, i) != At(w, i)) {
        return absl::StrCat(c.op, " output ", o, " element ", i, ": cuda ", At(g, i), ", cpu ",
                            At(w, i));
      }
    }
    // The loop above reads i32 and i64 only; bytes catch the rest.
    if (std::memcmp(w.raw_data(), g.raw_data(), w.byte_size()) != 0) {
      return absl::StrCat(c.op, " output ", o, ": bytes differ");
    }
  }
  return "";
}

// The wrap-around cases of `t` (i32 or i64) and small values: lowest, its
// neighbour, values whose square or product overflows, 0, +-1, max.
template <typename T>
std::vector<T> EdgeValues() {
  constexpr T lo = std::numeric_limits<T>::lowest();
  constexpr T hi = std::numeric_limits<T>::max();
  // Just past sqrt(max): squares wrap.
  constexpr T root = static_cast<T>(sizeof(T) == 4 ? int64_t{46341} : int64_t{3037000500});
  return {lo, T(lo + 1), T(-root), T(-65536), T(-7), T(-2), T(-1), T(0),
          T(1), T(2),      T(3),     T(7),      T(65536), root, T(hi - 1), hi};
}

LocalTensor Edges(DataType t, const std::vector<int64_t>& dims) {
  int64_t n = 1;
  for (int64_t d : dims) n *= d;
  // The 16 edge values repeated (and reversed every other round, so that
  // binary ops meet every ordering).
  auto fill = [&](auto values) {
    using T = typename decltype(values)::value_type;
    std::vector<T> out;
    for (int64_t i = 0; i < n; ++i) {
      const int64_t k = i % 16, round = i / 16;
      out.push_back(values[round % 2 == 0 ? k : 15 - k]);
    }
    return *LocalTensor::FromValues<T>(dims, out);
  };
  return t == DataType::kInt32 ? fill(EdgeValues<int32_t>()) : fill(EdgeValues<int64_t>());
}

// Edge values shifted by `by`: a second operand that pairs each value with
// others.
LocalTensor Rotated(DataType t, const std::vector<int64_t>& dims, int by) {
  LocalTensor out = *LocalTensor::Empty(t, dims);
  const LocalTensor e = Edges(t, {out.elem_cnt() + by});
  const int64_t bytes = ByteSizeOf(t);
  std::memcpy(out.raw_data(), static_cast<const char*>(e.raw_data()) + by * bytes,
              out.byte_size());
  return out;
}

// Exponents pow accepts: 0, 1, small, and ones that wrap (31, 63, 64).
LocalTensor Exponents(DataType t, const std::vector<int64_t>& dims) {
  const std::vector<double> e = {0, 1, 2, 3, 5, 7, 16, 31, 32, 33, 62, 63, 64, 100, 1, 2};
  std::vector<double> v;
  int64_t n = 1;
  for (int64_t d : dims) n *= d;
  for (int64_t i = 0; i < n; ++i) v.push_back(e[i % e.size()]);
  return *LocalTensor::FromDoubles(t, dims, v);
}

// "" when the op fails on the CPU and on CUDA with `code` and the same
// message but for the device it names: kernel statuses say which device's
// kernel failed ("broadcast_pow cpu kernel: ...", "no cpu kernel for op
// 'exp' ..."), so the CUDA message is the CPU's with "cuda" there.
std::string BothFailAlike(const Case& c, const std::vector<std::string>& signature,
                          absl::StatusCode code, const std::string& ranks = "0",
                          int64_t rank = 0) {
  const absl::Status cpu =
      RunOnRank(c.op, c.inputs, c.attrs, "cpu:" + ranks, signature, rank).status();
  const absl::Status gpu =
      RunOnRank(c.op, c.inputs, c.attrs, "cuda:" + ranks, signature, rank, DeviceType::kCuda)
          .status();
  if (cpu.code() != code) return "cpu: " + cpu.ToString();
  const std::string want =
      absl::StrReplaceAll(cpu.message(), {{" cpu kernel", " cuda kernel"}});
  if (gpu.code() != code || gpu.message() != want) {
    return "cuda: " + gpu.ToString() + " vs cpu: " + cpu.ToString();
  }
  return "";
}

const char* const kUnary[] = {"abs", "negative", "relu", "sign", "square"};
const char* const kBinary[] = {"broadcast_add",     "broadcast_sub",     "broadcast_mul",
                               "broadcast_maximum", "broadcast_minimum", "broadcast_pow"};

TEST(CudaIntElementwiseTest, UnaryMatchesCpuExactly) {
  REQUIRE_DEVICE();
  for (DataType t : kInts) {
    for (const char* op : kUnary) {
      // 16 edge values (whole 16-byte vectors); 37 (a tail); random values.
      EXPECT_EQ(ExactlyAsCpu({op, {Edges(t, {16})}}, {"B", "B"}), "") << op;
      EXPECT_EQ(ExactlyAsCpu({op, {Edges(t, {37})}}, {"B", "B"}), "") << op;
      EXPECT_EQ(ExactlyAsCpu({op, {IntTensor(t, {5, 9}, 3, -100, 100)}}, {"B", "B"}), "") << op;
      // Split rows: each rank's shard on its own.
      for (int64_t r = 0; r < 2; ++r) {
        EXPECT_EQ(ExactlyAsCpu({op, {Edges(t, {6, 7})}}, {"S(0)", "S(0)"}, "0-1", r), "")
            << op << " rank " << r;
      }
    }
  }
}

TEST(CudaIntElementwiseTest, BinaryMatchesCpuExactly) {
  REQUIRE_DEVICE();
  for (DataType t : kInts) {
    for (const char* op : kBinary) {
      const bool pow = std::string(op) == "broadcast_pow";
      // pow takes the edge values as bases and non-negative exponents.
      auto second = [&](const std::vector<int64_t>& dims, int by) {
        return pow ? Exponents(t, dims) : Rotated(t, dims, by);
      };
      // Same shapes: whole vectors (every pair at distance 1..3), and a
      // tail.
      for (int by : {1, 5, 11}) {
        EXPECT_EQ(ExactlyAsCpu({op, {Edges(t, {32}), second({32}, by)}}, {"B", "B", "B"}), "")
            << op << " " << by;
      }
      EXPECT_EQ(ExactlyAsCpu({op, {Edges(t, {37}), second({37}, 3)}}, {"B", "B", "B"}), "")
          << op;
      // Broadcasting: every edge value against every other (pow: against
      // every exponent); a rank-3 broadcast.
      const LocalTensor col = Edges(t, {16, 1});
      const LocalTensor row = pow ? Exponents(t, {1, 16}) : Edges(t, {1, 16});
      EXPECT_EQ(ExactlyAsCpu({op, {col, row}}, {"B", "B", "B"}), "") << op;
      EXPECT_EQ(ExactlyAsCpu({op, {Edges(t, {4, 1, 5}), second({3, 1}, 2)}}, {"B", "B", "B"}),
                "")
          << op;
      // Split layout: x split on rows, y (a row) repeated; x and y both
      // split on the column dim (2 and 3 ranks: uneven).
      const LocalTensor x = Edges(t, {6, 7});
      const LocalTensor y = pow ? Exponents(t, {7}) : Rotated(t, {7}, 4);
      for (int64_t r = 0; r < 2; ++r) {
        EXPECT_EQ(ExactlyAsCpu({op, {x, y}}, {"S(0)", "B", "S(0)"}, "0-1", r), "") << op;
      }
      for (int64_t r = 0; r < 3; ++r) {
        EXPECT_EQ(ExactlyAsCpu({op, {x, y}}, {"S(1)", "S(0)", "S(1)"}, "0-2", r), "") << op;
      }
    }
  }
}

TEST(CudaIntElementwiseTest, NegativeExponentIsTheCpuStatus) {
  REQUIRE_DEVICE();
  using Code = absl::StatusCode;
  for (DataType t : kInts) {
    const LocalTensor base = Edges(t, {16});
    // One negative exponent among many, on each path: same shapes (vector
    // path), broadcast, and on one rank of a split where only that rank
    // holds it.
    std::vector<double> e(16, 2);
    e[9] = -1;
    const LocalTensor exps = *LocalTensor::FromDoubles(t, {16}, e);
    EXPECT_EQ(BothFailAlike({"broadcast_pow", {base, exps}}, {"B", "B", "B"},
                            Code::kInvalidArgument),
              "");
    const LocalTensor one = *LocalTensor::FromDoubles(t, {1}, {-3});
    EXPECT_EQ(BothFailAlike({"broadcast_pow", {base, one}}, {"B", "B", "B"},
                            Code::kInvalidArgument),
              "");
    EXPECT_EQ(BothFailAlike({"broadcast_pow", {base, exps}}, {"S(0)", "S(0)", "S(0)"},
                            Code::kInvalidArgument, "0-1", 1),
              "");
    // The other rank holds no negative exponent: it succeeds, alike.
    EXPECT_EQ(ExactlyAsCpu({"broadcast_pow", {base, exps}}, {"S(0)", "S(0)", "S(0)"}, "0-1", 0),
              "");
  }
  // The message names the op and the blob (checked on the CPU, which the
  // comparison above ties CUDA to).
  const absl::Status s =
      RunOnRank("broadcast_pow",
                {Edges(DataType::kInt32, {4}), *LocalTensor::FromDoubles(DataType::kInt32, {4},
                                                                         {1, -2, 3, 4})},
                {}, "cuda:0", {"B", "B", "B"}, 0, DeviceType::kCuda)
          .status();
  EXPECT_EQ(s.code(), Code::kInvalidArgument) << s;
  EXPECT_NE(s.message().find("broadcast_pow"), std::string::npos) << s;
  EXPECT_NE(s.message().find("integer power with a negative exponent in y_0"),
            std::string::npos)
      << s;
}

TEST(CudaIntElementwiseTest, OpsAndDtypesTheCpuRefusesAreRefusedAlike) {
  REQUIRE_DEVICE();
  using Code = absl::StatusCode;
  const LocalTensor i = IntTensor(DataType::kInt32, {4}, 1, -3, 3);
  const LocalTensor i8 = IntTensor(DataType::kInt8, {4}, 2, -3, 3);
  // Integer division and the floating unary ops are not integer ops.
  EXPECT_EQ(BothFailAlike({"broadcast_div", {i, i}}, {"B", "B", "B"}, Code::kUnimplemented), "");
  EXPECT_EQ(BothFailAlike({"exp", {i}}, {"B", "B"}, Code::kUnimplemented), "");
  EXPECT_EQ(BothFailAlike({"sqrt", {i}}, {"B", "B"}, Code::kUnimplemented), "");
  // i8 is none of the ops' dtypes.
  EXPECT_EQ(BothFailAlike({"broadcast_add", {i8, i8}}, {"B", "B", "B"}, Code::kUnimplemented),
            "");
  EXPECT_EQ(BothFailAlike({"abs", {i8}}, {"B", "B"}, Code::kUnimplemented), "");
  // Mixed integer dtypes: the rule refuses them before either kernel.
  EXPECT_EQ(BothFailAlike({"broadcast_mul", {i, IntTensor(DataType::kInt64, {4}, 3, -3, 3)}},
                          {"B", "B", "B"}, Code::kInvalidArgument),
            "");
}

TEST(CudaIntElementwiseTest, LaunchersRefuseWhatTheGlueNeverPasses) {
  REQUIRE_DEVICE();
  namespace kc = kernels::cuda;
  LocalTensor x = *IntTensor(DataType::kInt32, {8}, 1, -3, 3).CopyTo(DeviceType::kCuda);
  LocalTensor y = *LocalTensor::Zeros(DataType::kInt32, {8}, DeviceType::kCuda);
  const int i32 = static_cast<int>(DataType::kInt32);
  // A floating-only op on an integer dtype: an error string, not garbage.
  EXPECT_NE(kc::Unary(kc::UnaryCode::kExp, i32, x.raw_data(), y.raw_data(), 8), "");
  const int64_t dims[] = {8}, unit[] = {1};
  EXPECT_NE(kc::Binary(kc::BinaryCode::kDiv, i32, 1, dims, unit, unit, x.raw_data(),
                       x.raw_data(), y.raw_data()),
            "");
  // A negative exponent with no flag to report it through: an error string.
  LocalTensor neg = *(*LocalTensor::Full(DataType::kInt32, {8}, -1)).CopyTo(DeviceType::kCuda);
  const std::string e = kc::Binary(kc::BinaryCode::kPow, i32, 1, dims, unit, unit, x.raw_data(),
                                   neg.raw_data(), y.raw_data());
  EXPECT_NE(e.find("negative exponent"), std::string::npos) << e;
  // With the flag: no error string, the flag set.
  bool raised = false;
  EXPECT_EQ(kc::Binary(kc::BinaryCode::kPow, i32, 1, dims, unit, unit, x.raw_data(),
                       neg.raw_data(), y.raw_data(), &raised),
            "");
  EXPECT_TRUE(raised);
}

// ----------------------------------------------------------------- matmul --
//
// Batch broadcasts the CUDA kernel once refused (kUnimplemented) and now
// plans as the CPU does (matmul_plan.h): several gemm runs per call.

TEST(CudaMatmulBroadcastTest, PartialBatchBroadcastsMatchCpu) {
  REQUIRE_DEVICE();
  using testing::CompareSharded;
  using testing::CompareWithCpu;
  using testing::GridTensor;
  for (DataType t : {DataType::kFloat32, DataType::kFloat64, DataType::kFloat16,
                     DataType::kBFloat16}) {
    // a's batch [1,1] against b's [2]; [2,1] against [1,3] (one run per a
    // matrix); [2,1,3] against [2,1] (b repeats inside each run); with
    // transposes, alpha and _add_to_output.
    EXPECT_EQ(CompareWithCpu({"broadcast_matmul",
                              {GridTensor(t, {1, 1, 3, 4}, 1), GridTensor(t, {2, 4, 5}, 2)}}),
              "")
        << DataTypeName(t);
    EXPECT_EQ(CompareWithCpu({"broadcast_matmul",
                              {GridTensor(t, {2, 1, 3, 4}, 1), GridTensor(t, {1, 3, 4, 5}, 2)}}),
              "")
        << DataTypeName(t);
    EXPECT_EQ(CompareWithCpu({"broadcast_matmul",
                              {GridTensor(t, {2, 1, 3, 4, 3}, 1), GridTensor(t, {2, 1, 5, 4}, 2),
                               GridTensor(t, {2, 2, 3, 3, 5}, 3)},
                              {"transpose_a=true", "transpose_b=true", "alpha=0.5"}}),
              "")
        << DataTypeName(t);
  }
  // Split batches: a's batch split, b broadcast on it; on 2 ranks.
  const Case c{"broadcast_matmul", {GridTensor(DataType::kFloat32, {4, 1, 3, 4}, 1),
                                    GridTensor(DataType::kFloat32, {1, 3, 4, 5}, 2)}};
  for (int64_t r = 0; r < 2; ++r) {
    EXPECT_EQ(CompareSharded(c, {"0-1", {"S(0)", "B", "S(0)"}, r}), "") << r;
    EXPECT_EQ(CompareSharded(c, {"0-1", {"B", "S(1)", "S(1)"}, r}), "") << r;
  }
}

TEST(CudaMatmulBroadcastTest, LayoutsTheCpuRefusesAreRefusedAlike) {
  REQUIRE_DEVICE();
  using testing::GridTensor;
  using Code = absl::StatusCode;
  const DataType f = DataType::kFloat32;
  // Batch dims that cannot form out's locally: a split on its batch dim, b
  // (not broadcast there) whole.
  EXPECT_EQ(BothFailAlike({"broadcast_matmul", {GridTensor(f, {2, 3, 4}, 1),
                                                GridTensor(f, {2, 4, 5}, 2)}},
                          {"S(0)", "B", "S(0)"}, Code::kInternal, "0-1", 0),
            "");
  // Integer operands: not the CPU's dtypes.
  EXPECT_EQ(BothFailAlike({"matmul", {IntTensor(DataType::kInt32, {2, 3}, 1, -3, 3),
                                      IntTensor(DataType::kInt32, {3, 2}, 2, -3, 3)}},
                          {"B", "B", "B"}, Code::kUnimplemented),
            "");
}

}  // namespace
}  // namespace oneflow_sbp
