// The CUDA gather, dim_gather, where, comparison, broadcast_fmod,
// logical_not, cast, tril, integer / floordiv / fmod scalar and fill
// kernels and the activation grads' dtypes against the CPU kernels on the
// same inputs (GPU only; main() prints "SKIPPED: no CUDA device" without
// one): one rank, split layouts where the op has them (partial gathers,
// broadcast operands split, tril's global diagonal), and the error cases,
// which must fail on both devices with the same code and message.
#include <cmath>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "gtest/gtest.h"
#include "oneflow_sbp/storage/cuda/cuda_device.h"
#include "oneflow_sbp/storage/local_tensor.h"
#include "tests/kernels/cuda_compare.h"
#include "tests/support/kernel_test_util.h"

namespace oneflow_sbp {
namespace {

using testing::BoolTensor;
using testing::Case;
using testing::CompareSharded;
using testing::CompareWithCpu;
using testing::GridTensor;
using testing::IntTensor;
using testing::RunOnRank;
using testing::Tensor;

const DataType kEvery[] = {DataType::kFloat32, DataType::kFloat64, DataType::kFloat16,
                           DataType::kBFloat16, DataType::kInt8,   DataType::kInt32,
                           DataType::kInt64,   DataType::kUInt8,   DataType::kBool};
const DataType kSigned[] = {DataType::kFloat32, DataType::kFloat64, DataType::kFloat16,
                            DataType::kBFloat16, DataType::kInt32,  DataType::kInt64};
const DataType kComparable[] = {DataType::kFloat32, DataType::kFloat64, DataType::kFloat16,
                                DataType::kBFloat16, DataType::kInt32,  DataType::kInt64,
                                DataType::kBool};

// Small integers (many equal pairs) in any dtype; bools at random.
LocalTensor Values(DataType t, const std::vector<int64_t>& dims, uint64_t seed) {
  if (t == DataType::kBool) return BoolTensor(dims, seed);
  const bool is_unsigned = t == DataType::kUInt8;
  return IntTensor(t, dims, seed, is_unsigned ? 0 : -3, 3);
}

LocalTensor Ids(DataType t, const std::vector<int64_t>& dims, int64_t extent, uint64_t seed) {
  return IntTensor(t, dims, seed, 0, static_cast<int>(extent - 1));
}

// "" when the op fails on the CPU and on CUDA with `code` and a message
// containing `text` on both.
std::string BothFail(const Case& c, const std::vector<std::string>& signature,
                     absl::StatusCode code, const std::string& text,
                     const std::string& ranks = "0", int64_t rank = 0) {
  std::string out;
  for (DeviceType d : {DeviceType::kCpu, DeviceType::kCuda}) {
    const std::string placement = (d == DeviceType::kCpu ? "cpu:" : "cuda:") + ranks;
    absl::Status s = RunOnRank(c.op, c.inputs, c.attrs, placement, signature, rank, d).status();
    if (s.code() != code || !absl::StrContains(s.message(), text)) {
      absl::StrAppend(&out, placement, ": ", s.ToString(), "; ");
    }
  }
  return out;
}

// ----------------------------------------------------------------- gather --

TEST(CudaSelectKernelsTest, GatherMatchesCpu) {
  REQUIRE_DEVICE();
  struct G {
    std::vector<int64_t> in, indices;
    int axis;
  };
  // Rows of 7 x 4 bytes (narrow units), 16-byte rows (f32 [.., 4]) and
  // scalars of one element.
  const G cases[] = {{{6, 7}, {2, 3}, 0}, {{6, 7}, {2, 3}, 1}, {{5, 4, 4}, {4}, 1},
                     {{7}, {5}, 0},       {{5, 4, 3}, {}, 2}, {{8, 4}, {9}, -2}};
  for (DataType id : {DataType::kInt32, DataType::kInt64}) {
    for (DataType t : kEvery) {
      for (const G& g : cases) {
        const int axis = g.axis < 0 ? g.axis + static_cast<int>(g.in.size()) : g.axis;
        const Case c{"gather",
                     {Values(t, g.in, 1), Ids(id, g.indices, g.in[axis], 2)},
                     {"axis=" + std::to_string(g.axis)}};
        EXPECT_EQ(CompareWithCpu(c), "") << DataTypeName(t) << " axis " << g.axis;
      }
    }
  }
  // in:S(axis) -> out:P: each rank writes the rows it holds, zeros for the
  // others (7 rows over 2 and 3 ranks: uneven); in split on another dim;
  // indices split.
  const Case rows{"gather", {GridTensor(DataType::kFloat32, {7, 5}, 3),
                             Ids(DataType::kInt64, {4, 3}, 7, 4)}, {"axis=0"}};
  const Case cols{"gather", {GridTensor(DataType::kFloat16, {6, 9}, 5),
                             Ids(DataType::kInt32, {5}, 9, 6)}, {"axis=1"}};
  for (int64_t r = 0; r < 3; ++r) {
    EXPECT_EQ(CompareSharded(rows, {"0-2", {"S(0)", "B", "P"}, r}), "") << r;
    EXPECT_EQ(CompareSharded(cols, {"0-2", {"S(1)", "B", "P"}, r}), "") << r;
  }
  for (int64_t r = 0; r < 2; ++r) {
    EXPECT_EQ(CompareSharded(cols, {"0-1", {"S(0)", "B", "S(0)"}, r}), "") << r;
    EXPECT_EQ(CompareSharded(rows, {"0-1", {"B", "S(1)", "S(1)"}, r}), "") << r;
  }
}

TEST(CudaSelectKernelsTest, DimGatherMatchesCpu) {
  REQUIRE_DEVICE();
  struct D {
    std::vector<int64_t> input, index;
    int dim;
  };
  const D cases[] = {{{4, 6}, {4, 3}, 1},       {{4, 6}, {2, 6}, 0}, {{3, 4, 5}, {3, 4, 2}, 2},
                     {{3, 4, 5}, {3, 6, 5}, 1}, {{7}, {9}, 0}};
  for (DataType id : {DataType::kInt32, DataType::kInt64}) {
    for (DataType t : kEvery) {
      for (const D& d : cases) {
        const Case c{"dim_gather",
                     {Values(t, d.input, 1), Ids(id, d.index, d.input[d.dim], 2)},
                     {"dim=" + std::to_string(d.dim)}};
        EXPECT_EQ(CompareWithCpu(c), "") << DataTypeName(t) << " dim " << d.dim;
      }
    }
  }
  // Rows split alike; the gathered dim split: a partial output.
  const Case c{"dim_gather", {GridTensor(DataType::kFloat32, {4, 6}, 3),
                              Ids(DataType::kInt64, {4, 3}, 6, 4)}, {"dim=1"}};
  for (int64_t r = 0; r < 2; ++r) {
    EXPECT_EQ(CompareSharded(c, {"0-1", {"S(0)", "S(0)", "S(0)"}, r}), "") << r;
    EXPECT_EQ(CompareSharded(c, {"0-1", {"S(1)", "B", "P"}, r}), "") << r;
  }
}

TEST(CudaSelectKernelsTest, GatherBadIndicesAndLayoutsAreStatuses) {
  REQUIRE_DEVICE();
  const LocalTensor in = GridTensor(DataType::kFloat32, {4, 6}, 1);
  for (double bad : {4.0, -1.0}) {
    const LocalTensor idx = Tensor(DataType::kInt64, {3}, {0, bad, 1});
    EXPECT_EQ(BothFail({"gather", {in, idx}, {"axis=0"}}, {"B", "B", "B"},
                       absl::StatusCode::kInvalidArgument, "at local position 1, outside [0, 4)"),
              "");
    const LocalTensor index = Tensor(DataType::kInt32, {1, 2}, {0, bad + 2});  // 6 or 1
    if (bad > 0) {
      EXPECT_EQ(BothFail({"dim_gather", {in, index}, {"dim=1"}}, {"B", "B", "B"},
                         absl::StatusCode::kInvalidArgument, "outside [0, 6)"),
                "");
    }
  }
  // in:S(0) with a B output: a rank lacks rows it must write.
  const LocalTensor idx = Tensor(DataType::kInt32, {2}, {0, 3});
  EXPECT_EQ(BothFail({"gather", {in, idx}, {"axis=0"}}, {"S(0)", "B", "B"},
                     absl::StatusCode::kInternal, "cannot be computed locally", "0-1", 0),
            "");
  // dim_gather with index rows the rank's input slice lacks.
  EXPECT_EQ(BothFail({"dim_gather", {in, Ids(DataType::kInt64, {2, 3}, 6, 2)}, {"dim=1"}},
                     {"S(0)", "S(0)", "S(0)"}, absl::StatusCode::kInternal,
                     "cannot be computed locally", "0-1", 1),
            "");
}

// -------------------------------------------------- where, comparisons --

TEST(CudaSelectKernelsTest, WhereMatchesCpu) {
  REQUIRE_DEVICE();
  for (DataType t : kComparable) {
    // Same shapes (vectors of 16 bytes, then a tail of 35 % N) and
    // broadcasting operands.
    EXPECT_EQ(CompareWithCpu({"where", {BoolTensor({5, 7}, 1), Values(t, {5, 7}, 2),
                                        Values(t, {5, 7}, 3)}}),
              "")
        << DataTypeName(t);
    const Case c{"where", {BoolTensor({4, 1}, 4), Values(t, {4, 6}, 5), Values(t, {6}, 6)}};
    EXPECT_EQ(CompareWithCpu(c), "") << DataTypeName(t);
    // x split on the dim y holds split too; condition repeats.
    for (int64_t r = 0; r < 2; ++r) {
      EXPECT_EQ(CompareSharded(c, {"0-1", {"B", "S(1)", "S(0)", "S(1)"}, r}), "") << r;
    }
  }
  // Operand dtypes the CPU refuses: the same statuses.
  EXPECT_EQ(BothFail({"where", {BoolTensor({3}, 1), Values(DataType::kInt8, {3}, 2),
                                Values(DataType::kInt8, {3}, 3)}},
                     {"B", "B", "B", "B"}, absl::StatusCode::kUnimplemented, "x_0"),
            "");
}

TEST(CudaSelectKernelsTest, ComparisonsAndFmodMatchCpu) {
  REQUIRE_DEVICE();
  const char* comparisons[] = {"broadcast_equal", "broadcast_not_equal",
                               "broadcast_greater", "broadcast_greater_equal",
                               "broadcast_less", "broadcast_less_equal"};
  for (DataType t : kComparable) {
    for (const char* op : comparisons) {
      EXPECT_EQ(CompareWithCpu({op, {Values(t, {6, 9}, 1), Values(t, {6, 9}, 2)}}), "") << op;
      const Case c{op, {Values(t, {6, 1}, 3), Values(t, {9}, 4)}};
      EXPECT_EQ(CompareWithCpu(c), "") << op << " " << DataTypeName(t);
      EXPECT_EQ(CompareSharded(c, {"0-2", {"S(0)", "B", "S(0)"}, 2}), "") << op;
    }
  }
  // NaN compares unequal to everything, itself included.
  const LocalTensor nan = Tensor(DataType::kFloat32, {3}, {NAN, 1, NAN});
  const LocalTensor one = Tensor(DataType::kFloat32, {3}, {NAN, 1, 2});
  for (const char* op : comparisons) EXPECT_EQ(CompareWithCpu({op, {nan, one}}), "") << op;
  // fmod: the sign of x, floats and integers, broadcast and split.
  for (DataType t : kSigned) {
    const LocalTensor x = Tensor(t, {2, 4}, {-7, 7, -7, 7, -5, 5, 0, 3});
    const LocalTensor y = Tensor(t, {4}, {3, -3, -3, 3});
    const Case c{"broadcast_fmod", {x, y}};
    EXPECT_EQ(CompareWithCpu(c), "") << DataTypeName(t);
    EXPECT_EQ(CompareSharded(c, {"0-1", {"S(1)", "S(0)", "S(1)"}, 1}), "") << DataTypeName(t);
  }
  EXPECT_EQ(CompareWithCpu({"broadcast_fmod", {GridTensor(DataType::kFloat64, {5, 8}, 1, -9, 9),
                                               GridTensor(DataType::kFloat64, {5, 8}, 2, 1, 3)}}),
            "");
  // Integer fmod by 0 and the dtypes the CPU refuses.
  const LocalTensor a = Tensor(DataType::kInt32, {3}, {1, 2, 3});
  const LocalTensor z = Tensor(DataType::kInt32, {3}, {1, 0, 1});
  EXPECT_EQ(BothFail({"broadcast_fmod", {a, z}}, {"B", "B", "B"},
                     absl::StatusCode::kInvalidArgument, "integer fmod by 0 in y_0"),
            "");
  EXPECT_EQ(BothFail({"broadcast_less", {Values(DataType::kUInt8, {3}, 1),
                                         Values(DataType::kUInt8, {3}, 2)}},
                     {"B", "B", "B"}, absl::StatusCode::kUnimplemented, "x_0"),
            "");
}

// ------------------------------------------------- logical_not, cast, tril --

TEST(CudaSelectKernelsTest, LogicalNotMatchesCpu) {
  REQUIRE_DEVICE();
  for (DataType t : kComparable) {
    EXPECT_EQ(CompareWithCpu({"logical_not", {Values(t, {7, 11}, 1)}}), "") << DataTypeName(t);
  }
  EXPECT_EQ(CompareWithCpu({"logical_not", {Tensor(DataType::kFloat32, {3}, {NAN, -0.0, 2})}}),
            "");
  EXPECT_EQ(BothFail({"logical_not", {Values(DataType::kInt8, {3}, 1)}}, {"B", "B"},
                     absl::StatusCode::kUnimplemented, "x_0"),
            "");
}

TEST(CudaSelectKernelsTest, CastMatchesCpuBetweenEveryPair) {
  REQUIRE_DEVICE();
  const char* names[] = {"f32", "f64", "f16", "bf16", "i8", "i32", "i64", "u8", "bool"};
  // Saturation, truncation toward 0, NaN and infinities to integers, and
  // f64 -> f16 through f32 (1 + 2^-11 + 2^-30 rounds twice, to 1).
  const std::vector<double> special = {-2.75, -0.5, 0,   1.5, 300, 1e10, -1e10,
                                       NAN,   INFINITY, -INFINITY, 1 + std::ldexp(1, -11) +
                                                                       std::ldexp(1, -30)};
  for (DataType from : kEvery) {
    std::vector<LocalTensor> inputs = {Values(from, {5, 7}, 1)};
    if (from == DataType::kFloat32 || from == DataType::kFloat64) {
      inputs.push_back(Tensor(from, {static_cast<int64_t>(special.size())}, special));
    }
    if (from == DataType::kInt64 || from == DataType::kInt32) {
      inputs.push_back(Tensor(from, {4}, {-129, 255, 256, 70000}));  // wraps narrowing
    }
    for (const char* to : names) {
      for (const LocalTensor& x : inputs) {
        EXPECT_EQ(CompareWithCpu({"cast", {x}, {std::string("dtype=") + to}}), "")
            << DataTypeName(from) << " -> " << to;
      }
    }
  }
  // P stays P (cast is linear on its rule's candidates): an addend per rank.
  const Case c{"cast", {GridTensor(DataType::kFloat32, {4, 6}, 2)}, {"dtype=f64"}};
  EXPECT_EQ(CompareSharded(c, {"0-1", {"S(1)", "S(1)"}, 1}), "");
  EXPECT_EQ(BothFail({"cast", {GridTensor(DataType::kFloat32, {3}, 1)}, {"dtype=f99"}},
                     {"B", "B"}, absl::StatusCode::kInvalidArgument, "dtype"),
            "");
}

TEST(CudaSelectKernelsTest, TrilMatchesCpu) {
  REQUIRE_DEVICE();
  for (DataType t : kEvery) {
    for (int64_t diagonal : {-1, 0, 3}) {
      // Rows of 16 elements take the vector path, rows of 7 the scalar one.
      const Case wide{"tril", {Values(t, {2, 6, 16}, 2)}, {"diagonal=" + std::to_string(diagonal)}};
      EXPECT_EQ(CompareWithCpu(wide), "") << DataTypeName(t) << " " << diagonal;
      const Case c{"tril", {Values(t, {3, 5, 7}, 1)}, {"diagonal=" + std::to_string(diagonal)}};
      EXPECT_EQ(CompareWithCpu(c), "") << DataTypeName(t) << " " << diagonal;
      // Rows or columns split: the diagonal in global coordinates.
      for (int64_t r = 0; r < 3; ++r) {
        EXPECT_EQ(CompareSharded(c, {"0-2", {"S(1)", "S(1)"}, r}), "") << r;
        EXPECT_EQ(CompareSharded(c, {"0-2", {"S(2)", "S(2)"}, r}), "") << r;
      }
    }
  }
  // Below rank 2: refused on both devices alike.
  const Case vec{"tril", {GridTensor(DataType::kFloat32, {4}, 1)}, {"diagonal=0"}};
  const absl::Status cpu = RunOnRank("tril", vec.inputs, vec.attrs, "cpu:0", {"B", "B"}, 0).status();
  EXPECT_FALSE(cpu.ok());
  EXPECT_EQ(BothFail(vec, {"B", "B"}, cpu.code(), "rank"), "");
}

// ------------------------------------------------------------ scalar ops --

TEST(CudaSelectKernelsTest, IntegerFloorDivAndFmodScalarsMatchCpu) {
  REQUIRE_DEVICE();
  auto by_int = [](int64_t v) {
    return std::vector<std::string>{"has_float_operand=false", "has_int_operand=true",
                                    "int_operand=" + std::to_string(v)};
  };
  const std::vector<std::string> by_float = {"has_float_operand=true", "has_int_operand=false",
                                             "float_operand=-1.5"};
  const char* ops[] = {"scalar_add", "scalar_mul", "scalar_pow", "scalar_floordiv",
                       "scalar_fmod"};
  for (DataType t : {DataType::kInt32, DataType::kInt64}) {
    // Negative values and operands: floor and fmod signs; -1 (the
    // lowest() / -1 guard); wrap-around of add and mul.
    const LocalTensor x = IntTensor(t, {9, 13}, 1, -50, 50);
    const LocalTensor big = Tensor(t, {3}, {t == DataType::kInt32 ? 2147483647.0 : 9.2e18, -7, 7});
    for (const char* op : ops) {
      for (int64_t v : {3, -3, -1, 2}) {
        if (v < 0 && std::string(op) == "scalar_pow") continue;  // refused, below
        EXPECT_EQ(CompareWithCpu({op, {x}, by_int(v)}), "") << op << " " << v;
        EXPECT_EQ(CompareWithCpu({op, {big}, by_int(v)}), "") << op << " " << v;
      }
    }
  }
  for (DataType t : {DataType::kFloat32, DataType::kFloat64, DataType::kFloat16,
                     DataType::kBFloat16}) {
    const LocalTensor x = GridTensor(t, {11, 13}, 3, -4, 4);
    for (const char* op : {"scalar_floordiv", "scalar_fmod"}) {
      EXPECT_EQ(CompareWithCpu({op, {x}, by_float}), "") << op << " " << DataTypeName(t);
      EXPECT_EQ(CompareWithCpu({op, {x}, by_int(3)}), "") << op << " " << DataTypeName(t);
    }
  }
  // Split layouts: elementwise, any block.
  const Case c{"scalar_floordiv", {IntTensor(DataType::kInt64, {6, 4}, 5, -20, 20)}, by_int(-3)};
  EXPECT_EQ(CompareSharded(c, {"0-1", {"S(0)", "S(0)"}, 1}), "");
  // The CPU's refusals, on both devices.
  const LocalTensor i = IntTensor(DataType::kInt32, {4}, 1);
  using Code = absl::StatusCode;
  EXPECT_EQ(BothFail({"scalar_floordiv", {i}, by_int(0)}, {"B", "B"}, Code::kInvalidArgument,
                     "integer division by int_operand 0"),
            "");
  EXPECT_EQ(BothFail({"scalar_fmod", {i}, by_int(0)}, {"B", "B"}, Code::kInvalidArgument,
                     "integer division by int_operand 0"),
            "");
  EXPECT_EQ(BothFail({"scalar_pow", {i}, by_int(-2)}, {"B", "B"}, Code::kInvalidArgument,
                     "negative exponent"),
            "");
  EXPECT_EQ(BothFail({"scalar_add", {i}, by_int(int64_t{1} << 40)}, {"B", "B"},
                     Code::kInvalidArgument, "does not fit i32"),
            "");
  EXPECT_EQ(BothFail({"scalar_mul", {i}, by_float}, {"B", "B"}, Code::kUnimplemented,
                     "float operand"),
            "");
  EXPECT_EQ(BothFail({"scalar_div", {i}, by_int(2)}, {"B", "B"}, Code::kUnimplemented, "in_0"), "");
}

// fill, relu_grad and the float scalar operand where a plain cast or the
// launcher's dtype list differed from the CPU (cuda_support_kernels.cc).
TEST(CudaSelectKernelsTest, FillActivationGradDtypesAndScalarOperandsMatchCpu) {
  REQUIRE_DEVICE();
  // Values outside the integer dtypes (saturated on the CPU), NaN (0),
  // beyond f32 (inf) and fractions (truncated toward 0).
  const LocalTensor like = GridTensor(DataType::kFloat32, {5, 9}, 2);
  for (const char* dtype : {"i8", "u8", "i32", "i64", "bool", "f16", "bf16", "f32", "f64"}) {
    for (const char* value : {"300", "-1", "1e10", "-1e10", "1e30", "-1e300", "nan", "-2.5"}) {
      const std::vector<std::string> attrs = {std::string("value=") + value,
                                              std::string("dtype=") + dtype};
      EXPECT_EQ(CompareWithCpu({"fill", {like}, attrs}), "") << dtype << " " << value;
    }
  }
  // relu_grad takes i32 and i64 on the CPU; the other grads refuse them,
  // and every grad refuses i8, naming dy.
  for (DataType t : {DataType::kInt32, DataType::kInt64}) {
    const LocalTensor y = IntTensor(t, {5, 7}, 1, -3, 3), dy = IntTensor(t, {5, 7}, 2);
    EXPECT_EQ(CompareWithCpu({"relu_grad", {y, dy}}), "") << DataTypeName(t);
  }
  const LocalTensor i32 = IntTensor(DataType::kInt32, {4}, 1);
  const LocalTensor i8 = IntTensor(DataType::kInt8, {4}, 1);
  for (const char* op : {"silu_grad", "gelu_grad"}) {
    EXPECT_EQ(BothFail({op, {i32, i32}}, {"B", "B", "B"}, absl::StatusCode::kUnimplemented,
                       "(dy_0)"),
              "")
        << op;
  }
  EXPECT_EQ(BothFail({"relu_grad", {i8, i8}}, {"B", "B", "B"}, absl::StatusCode::kUnimplemented,
                     "(dy_0)"),
            "");
  // An int operand above 2^53 on f32 / bf16: int64 -> float directly
  // (2^53 + 2^30), where int64 -> double -> float rounds twice (2^53);
  // x = -2^53 leaves the difference: 2^30, or 0.
  const std::vector<std::string> huge = {"has_float_operand=false", "has_int_operand=true",
                                         "int_operand=9007199791611905"};
  for (DataType t : {DataType::kFloat32, DataType::kBFloat16}) {
    const LocalTensor x = Tensor(t, {2}, {-9007199254740992.0, -9007199254740992.0});
    EXPECT_EQ(CompareWithCpu({"scalar_add", {x}, huge}), "") << DataTypeName(t);
  }
}

}  // namespace
}  // namespace oneflow_sbp
