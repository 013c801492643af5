// The CUDA reduce_prod, reduce_nansum, reduce_sum_like (and the integer
// dtypes of reduce_sum/max/min), sgd_update, conv2d and argwhere kernels
// against the CPU kernels on the same inputs (GPU only; without a device
// main() prints "SKIPPED: no CUDA device" and every test skips: a skip is
// not a pass). One rank, split layouts where the op has them, and the
// error cases (layouts the kernels cannot compute, bad attributes,
// unsupported dtypes).
#include <cmath>
#include <cstring>
#include <limits>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "gtest/gtest.h"
#include "oneflow_sbp/storage/cuda/cuda_device.h"
#include "oneflow_sbp/storage/local_tensor.h"
#include "tests/kernels/cuda_compare.h"
#include "tests/support/kernel_test_util.h"

namespace oneflow_sbp {
namespace {

using testing::Case;
using testing::CompareSharded;
using testing::CompareUpdateWithCpu;
using testing::CompareWithCpu;
using testing::GridTensor;
using testing::IntTensor;
using testing::RunOnRank;

const DataType kFloatingTypes[] = {DataType::kFloat32, DataType::kFloat64, DataType::kFloat16,
                                   DataType::kBFloat16};
const DataType kNumericTypes[] = {DataType::kFloat32, DataType::kFloat64, DataType::kFloat16,
                                  DataType::kBFloat16, DataType::kInt32,   DataType::kInt64};

bool IsInt(DataType t) { return t == DataType::kInt32 || t == DataType::kInt64; }

// Values in [-1, 1.5] (integers in [-3, 3]): products of a few dozen stay
// inside every floating dtype; integer products wrap alike on both sides.
LocalTensor Values(DataType t, const std::vector<int64_t>& dims, uint64_t seed) {
  return IsInt(t) ? IntTensor(t, dims, seed, -3, 3) : GridTensor(t, dims, seed, -1, 1.5);
}

// The CPU kernel's error on a call and the CUDA kernel's: "" when both
// fail with `want` (the kernels share their checks, so they must agree).
std::string SameError(absl::StatusCode want, const std::string& op,
                      const std::vector<LocalTensor>& inputs,
                      const std::vector<std::string>& attrs, const std::string& ranks,
                      const std::vector<std::string>& signature, int64_t rank = 0) {
  for (DeviceType d : {DeviceType::kCpu, DeviceType::kCuda}) {
    const std::string where = d == DeviceType::kCpu ? "cpu" : "cuda";
    const absl::Status s =
        RunOnRank(op, inputs, attrs, where + ":" + ranks, signature, rank, d).status();
    if (s.code() != want) return where + ": " + s.ToString();
  }
  return "";
}

// "" when every CUDA output of `c` (one rank, every blob B) has the CPU's
// bits; else the first element that differs. A NaN matches any NaN (x86
// and NVIDIA GPUs write different NaN bits for inf - inf); -0 and +0 do
// not match, which CompareWithCpu's tolerance cannot see. For what the
// column path claims bit for bit: max, min and integers at any reduced
// length, every op up to 128 reduced positions (the CPU's order).
std::string BitwiseAsCpu(const Case& c) {
  const std::vector<std::string> signature(c.inputs.size() + 1, "B");
  absl::StatusOr<std::vector<LocalTensor>> want =
      RunOnRank(c.op, c.inputs, c.attrs, "cpu:0", signature, 0);
  if (!want.ok()) return "cpu: " + want.status().ToString();
  absl::StatusOr<std::vector<LocalTensor>> got =
      RunOnRank(c.op, c.inputs, c.attrs, "cuda:0", signature, 0, DeviceType::kCuda);
  if (!got.ok()) return "cuda: " + got.status().ToString();
  for (size_t o = 0; o < want->size(); ++o) {
    const LocalTensor& w = (*want)[o];
    const LocalTensor& g = (*got)[o];
    if (w.dtype() != g.dtype() || w.dims() != g.dims()) return c.op + ": dtype or dims differ";
    const int64_t bytes = ByteSizeOf(w.dtype());
    const char* wb = static_cast<const char*>(w.raw_data());
    const char* gb = static_cast<const char*>(g.raw_data());
    for (int64_t i = 0; i < w.elem_cnt(); ++i) {
      if (std::memcmp(wb + i * bytes, gb + i * bytes, bytes) == 0) continue;
      if (!IsInt(w.dtype()) && std::isnan(w.GetDouble(i)) && std::isnan(g.GetDouble(i))) continue;
      return c.op + " element " + std::to_string(i) + ": cuda " + std::to_string(g.GetDouble(i)) +
             (std::signbit(g.GetDouble(i)) ? " (sign set)" : "") + ", cpu " +
             std::to_string(w.GetDouble(i)) + (std::signbit(w.GetDouble(i)) ? " (sign set)" : "");
    }
  }
  return "";
}

// --------------------------------------------------------------- reduce --

TEST(CudaReduceConvKernelsTest, ReductionsMatchCpu) {
  REQUIRE_DEVICE();
  for (DataType t : kNumericTypes) {
    std::vector<std::string> ops = {"reduce_prod", "reduce_sum", "reduce_max", "reduce_min"};
    if (!IsInt(t)) ops.push_back("reduce_nansum");
    for (const std::string& op : ops) {
      for (const char* axis : {"axis=0", "axis=1", "axis=[0,2]", "axis=-1", "axis=[0,1,2]"}) {
        for (const char* keep : {"keepdims=false", "keepdims=true"}) {
          EXPECT_EQ(CompareWithCpu({op, {Values(t, {5, 7, 3}, 4)}, {axis, keep}}), "")
              << op << " " << DataTypeName(t) << " " << axis << " " << keep;
        }
      }
      // A long reduced row (many threads of the block, the tree reduction).
      EXPECT_EQ(CompareWithCpu({op, {Values(t, {3, 1000}, 5)}, {"axis=1"}}), "")
          << op << " " << DataTypeName(t);
      // Kept dim split (S(0) -> S(0)); reduced dim split (S(1) -> P, the
      // sum family's addends).
      EXPECT_EQ(CompareSharded({op, {Values(t, {5, 7}, 6)}, {"axis=1"}},
                               {"0-1", {"S(0)", "S(0)"}, 1}),
                "")
          << op << " " << DataTypeName(t);
      if (op == "reduce_sum" || op == "reduce_nansum") {
        EXPECT_EQ(CompareSharded({op, {Values(t, {5, 7}, 6)}, {"axis=1"}},
                                 {"0-2", {"S(1)", "P"}, 2}),
                  "")
            << op << " " << DataTypeName(t);
      }
    }
  }
}

TEST(CudaReduceConvKernelsTest, NanSumSkipsNaNAndProdPropagatesIt) {
  REQUIRE_DEVICE();
  const double nan = std::numeric_limits<double>::quiet_NaN();
  for (DataType t : kFloatingTypes) {
    const LocalTensor x = testing::Tensor(t, {2, 3}, {1, nan, 3, nan, nan, 0.5});
    for (const char* op : {"reduce_nansum", "reduce_prod", "reduce_sum"}) {
      EXPECT_EQ(CompareWithCpu({op, {x}, {"axis=1"}}), "") << op << " " << DataTypeName(t);
    }
  }
}

TEST(CudaReduceConvKernelsTest, ReductionsPastTheGridCapMatchCpu) {
  REQUIRE_DEVICE();
  // 70000 outputs: more than GridFor's 65536 blocks, so blocks must stride
  // on to the rest (a one-pass grid would leave them poisoned).
  for (DataType t : {DataType::kFloat32, DataType::kInt64}) {
    for (const char* op : {"reduce_sum", "reduce_max", "reduce_prod"}) {
      EXPECT_EQ(CompareWithCpu({op, {Values(t, {70000, 3}, 7)}, {"axis=1"}}), "")
          << op << " " << DataTypeName(t);
    }
  }
  EXPECT_EQ(CompareWithCpu({"reduce_mean", {Values(DataType::kFloat64, {3, 70000}, 7)},
                            {"axis=0"}}),
            "");
}

// The column path (reduce_softmax.cu): x's innermost dim kept, each output
// combined by one thread in chunks of 128 reduced positions.
TEST(CudaReduceConvKernelsTest, ColumnReductionsMatchCpu) {
  REQUIRE_DEVICE();
  struct Shape {
    std::vector<int64_t> dims;
    const char* axis;
    int64_t reduced;  // reduced positions per output
    bool columns;     // the column path (else the row path)
  };
  const Shape shapes[] = {
      {{128, 33}, "axis=0", 128, true},  // one chunk exactly: the CPU's order
      {{129, 33}, "axis=0", 129, true},  // a chunk of one after a full one
      {{300, 5}, "axis=0", 300, true},   // three chunks, 5 columns (a part warp)
      {{1000, 3}, "axis=0", 1000, true},  // eight chunks (the merge's unrolled loop)
      {{7, 260, 3}, "axis=1", 260, true},  // outer, reduce, inner
      {{3, 4, 2, 3}, "axis=[0,2]", 6, true},  // two reduced dims not contiguous
      {{20, 3, 9, 2}, "axis=[0,2]", 180, true},  // and 180 long: chunk 2 starts mid-dim
      {{2, 70, 3, 5}, "axis=[0,1]", 140, true},  // reduced dims merged: 140 long
      {{40, 1}, "axis=0", 40, false},            // inner 1: the row path
  };
  for (DataType t : kNumericTypes) {
    std::vector<std::string> ops = {"reduce_sum", "reduce_max", "reduce_min", "reduce_prod"};
    if (!IsInt(t)) ops.insert(ops.end(), {"reduce_mean", "reduce_nansum"});
    for (const std::string& op : ops) {
      const bool select = op == "reduce_max" || op == "reduce_min";
      for (const Shape& s : shapes) {
        const Case c{op, {Values(t, s.dims, 11)}, {s.axis}};
        EXPECT_EQ(CompareWithCpu(c), "")
            << op << " " << DataTypeName(t) << " " << s.axis << " rank " << s.dims.size();
        // Integers wrap alike in any order; elsewhere the column path
        // keeps the CPU's bits where it claims to.
        if (IsInt(t) || (s.columns && (select || s.reduced <= 128))) {
          EXPECT_EQ(BitwiseAsCpu(c), "")
              << op << " " << DataTypeName(t) << " " << s.axis << " rank " << s.dims.size();
        }
      }
      // A kept-dim split (the local block is [300, 3] or [300, 2]).
      EXPECT_EQ(CompareSharded({op, {Values(t, {300, 8}, 12)}, {"axis=0"}},
                               {"0-2", {"S(1)", "S(0)"}, 2}),
                "")
          << op << " " << DataTypeName(t);
    }
    // The reduced dim split over more ranks than its extent: rank 3's
    // block is [0, 5], its addend the identity in every column.
    EXPECT_EQ(CompareSharded({"reduce_sum", {Values(t, {2, 5}, 13)}, {"axis=0"}},
                             {"0-3", {"S(0)", "P"}, 3}),
              "")
        << DataTypeName(t);
  }
}

// NaN, infinities and signed zeros across chunk boundaries: max/min keep
// the first NaN and the first of equal values, nansum keeps the NaN of
// inf + -inf (a NaN chunk result is not skipped), all as the CPU.
TEST(CudaReduceConvKernelsTest, ColumnReductionsKeepNaNAndTiesAsCpu) {
  REQUIRE_DEVICE();
  const double nan = std::numeric_limits<double>::quiet_NaN();
  const double inf = std::numeric_limits<double>::infinity();
  const int64_t rows = 300, cols = 4;
  std::vector<double> v(rows * cols, 0.5);
  v[200 * cols + 0] = nan;        // column 0: NaN in the second chunk
  v[10 * cols + 1] = inf;         // column 1: inf + -inf in one chunk,
  v[20 * cols + 1] = -inf;        //   finite chunks after it
  v[10 * cols + 2] = inf;         // column 2: inf and -inf in two chunks
  v[140 * cols + 2] = -inf;
  for (int64_t r = 0; r < rows; ++r) v[r * cols + 3] = r % 2 ? 0.0 : -0.0;  // column 3
  for (DataType t : kFloatingTypes) {
    const LocalTensor x = testing::Tensor(t, {rows, cols}, v);
    for (const char* op :
         {"reduce_sum", "reduce_nansum", "reduce_max", "reduce_min", "reduce_prod"}) {
      EXPECT_EQ(CompareWithCpu({op, {x}, {"axis=0"}}), "") << op << " " << DataTypeName(t);
      // Bits: in column 3 max is -0 (the first of equal values) and min +0
      // (the last), the CPU's selections, which fmax/fmin need not give;
      // the sums of halves and the products are exact in any order here,
      // so every op must give the CPU's bits.
      EXPECT_EQ(BitwiseAsCpu({op, {x}, {"axis=0"}}), "") << op << " " << DataTypeName(t);
    }
  }
}

// 2^24 + 1000 columns: more threads than GridFor's 65536 blocks hold, so
// the column threads must stride on (a one-pass grid would leave outputs
// poisoned).
TEST(CudaReduceConvKernelsTest, ColumnReductionsPastTheGridCapMatchCpu) {
  REQUIRE_DEVICE();
  const LocalTensor x = Values(DataType::kFloat32, {2, (int64_t{1} << 24) + 1000}, 14);
  EXPECT_EQ(CompareWithCpu({"reduce_sum", {x}, {"axis=0"}}), "");
}

TEST(CudaReduceConvKernelsTest, ReduceSumLikeMatchesCpu) {
  REQUIRE_DEVICE();
  for (DataType t : kNumericTypes) {
    const LocalTensor x = Values(t, {5, 6, 7}, 8);
    // Same rank as like (kept as 1s), lower rank (dropped), several axes.
    EXPECT_EQ(CompareWithCpu({"reduce_sum_like", {x, Values(t, {5, 1, 7}, 9)}, {"axis=1"}}), "")
        << DataTypeName(t);
    EXPECT_EQ(CompareWithCpu({"reduce_sum_like", {x, Values(t, {5, 7}, 9)}, {"axis=1"}}), "")
        << DataTypeName(t);
    EXPECT_EQ(CompareWithCpu({"reduce_sum_like", {x, Values(t, {6}, 9)}, {"axis=[0,2]"}}), "")
        << DataTypeName(t);
    // x and like split alike on a kept dim; x split on the reduced dim
    // (like B, out P: addends).
    EXPECT_EQ(CompareSharded({"reduce_sum_like", {x, Values(t, {5, 7}, 9)}, {"axis=1"}},
                             {"0-1", {"S(0)", "S(0)", "S(0)"}, 1}),
              "")
        << DataTypeName(t);
    EXPECT_EQ(CompareSharded({"reduce_sum_like", {x, Values(t, {5, 7}, 9)}, {"axis=1"}},
                             {"0-2", {"S(1)", "B", "P"}, 1}),
              "")
        << DataTypeName(t);
  }
}

TEST(CudaReduceConvKernelsTest, ReduceErrorsAreStatuses) {
  REQUIRE_DEVICE();
  const LocalTensor x = GridTensor(DataType::kFloat32, {5, 6, 7}, 1);
  // A bad axis: kInvalidArgument naming the attribute, as on the CPU.
  EXPECT_EQ(SameError(absl::StatusCode::kInvalidArgument, "reduce_prod", {x}, {"axis=3"}, "0",
                      {"B", "B"}),
            "");
  EXPECT_EQ(SameError(absl::StatusCode::kInvalidArgument, "reduce_sum_like",
                      {x, GridTensor(DataType::kFloat32, {5, 7}, 2)}, {"axis=-4"}, "0",
                      {"B", "B", "B"}),
            "");
}

// ----------------------------------------------------------- sgd_update --

TEST(CudaReduceConvKernelsTest, SgdUpdateMatchesCpu) {
  REQUIRE_DEVICE();
  for (DataType t : kFloatingTypes) {
    // 1003 elements: the 16-byte vector body and a scalar tail.
    for (const std::vector<int64_t>& dims : {std::vector<int64_t>{1003}, {4, 6}}) {
      const LocalTensor w = GridTensor(t, dims, 1), g = GridTensor(t, dims, 2);
      EXPECT_EQ(CompareUpdateWithCpu({"sgd_update", {w, g}, {}}), "") << DataTypeName(t);
      EXPECT_EQ(CompareUpdateWithCpu(
                    {"sgd_update", {w, g}, {"learning_rate=0.5", "scale=2", "weight_decay=0.25"}}),
                "")
          << DataTypeName(t);
    }
    // Every operand split alike: the update is elementwise on the shards
    // (7 rows over 3 ranks: uneven).
    const LocalTensor w = GridTensor(t, {7, 5}, 1), g = GridTensor(t, {7, 5}, 2);
    for (int64_t r = 0; r < 3; ++r) {
      EXPECT_EQ(CompareUpdateWithCpu({"sgd_update", {w, g}, {"weight_decay=0.1"}}, "0-2", "S(0)",
                                     r),
                "")
          << DataTypeName(t) << " rank " << r;
    }
  }
}

TEST(CudaReduceConvKernelsTest, SgdUpdateMismatchedShardsAreStatuses) {
  REQUIRE_DEVICE();
  const LocalTensor t = GridTensor(DataType::kFloat32, {4, 6}, 1);
  // model and model_diff split differently: not elementwise on the shards.
  EXPECT_EQ(SameError(absl::StatusCode::kInternal, "sgd_update", {t, t}, {}, "0-1",
                      {"S(0)", "S(1)"}),
            "");
}

// ---------------------------------------------------------------- conv2d --

struct ConvCase {
  std::vector<int64_t> in, weight;  // NCHW, [F, C/groups, kh, kw]
  std::vector<std::string> attrs;   // besides filters and kernel_size
};

std::vector<std::string> ConvAttrs(const ConvCase& c) {
  std::vector<std::string> a = {
      "filters=" + std::to_string(c.weight[0]),
      "kernel_size=" + std::to_string(c.weight[2]) + "," + std::to_string(c.weight[3])};
  a.insert(a.end(), c.attrs.begin(), c.attrs.end());
  return a;
}

const std::vector<ConvCase>& ConvCases() {
  static const auto* cases = new std::vector<ConvCase>{
      {{2, 3, 6, 5}, {4, 3, 3, 3}, {}},
      {{3, 4, 7, 6}, {5, 4, 3, 2}, {"strides=2,2", "padding_before=1,1"}},
      {{2, 2, 7, 7}, {3, 2, 2, 2}, {"strides=1,2", "padding_before=1,0", "dilation_rate=2,2"}},
      {{2, 4, 5, 5}, {6, 2, 3, 3}, {"padding_before=1,1", "groups=2"}},
      {{3, 3, 5, 4}, {3, 1, 2, 2}, {"padding_before=0,1", "groups=3"}},  // depthwise
      {{1, 5, 4, 4}, {7, 5, 1, 1}, {}},                                   // 1x1
  };
  return *cases;
}

TEST(CudaReduceConvKernelsTest, Conv2dMatchesCpu) {
  REQUIRE_DEVICE();
  for (const ConvCase& c : ConvCases()) {
    for (DataType t : kFloatingTypes) {
      const LocalTensor in = GridTensor(t, c.in, 1, -1, 1);
      const LocalTensor w = GridTensor(t, c.weight, 2, -1, 1);
      const LocalTensor bias = GridTensor(t, {c.weight[0]}, 3);
      // _add_to_output shaped as out: the CPU's output for the same call.
      absl::StatusOr<std::vector<LocalTensor>> out =
          testing::RunOnce("conv2d", {in, w}, ConvAttrs(c));
      ASSERT_TRUE(out.ok()) << out.status();
      const LocalTensor add = GridTensor(t, std::vector<int64_t>((*out)[0].dims().begin(), (*out)[0].dims().end()), 4);
      EXPECT_EQ(CompareWithCpu({"conv2d", {in, w}, ConvAttrs(c)}), "") << DataTypeName(t);
      EXPECT_EQ(CompareWithCpu({"conv2d", {in, w, bias}, ConvAttrs(c)}), "") << DataTypeName(t);
      EXPECT_EQ(CompareWithCpu({"conv2d", {in, w, bias, add}, ConvAttrs(c)}), "")
          << DataTypeName(t);
    }
  }
}

TEST(CudaReduceConvKernelsTest, Conv2dSplitLayoutsMatchCpu) {
  REQUIRE_DEVICE();
  const ConvCase& c = ConvCases()[1];
  for (DataType t : {DataType::kFloat32, DataType::kFloat64}) {
    const LocalTensor in = GridTensor(t, c.in, 1, -1, 1);
    const LocalTensor w = GridTensor(t, c.weight, 2, -1, 1);
    const LocalTensor bias = GridTensor(t, {c.weight[0]}, 3);
    for (int64_t r = 0; r < 2; ++r) {
      // Batch split (3 images over 2 ranks: uneven).
      EXPECT_EQ(CompareSharded({"conv2d", {in, w}, ConvAttrs(c)}, {"0-1", {"S(0)", "B", "S(0)"}, r}),
                "")
          << DataTypeName(t) << " rank " << r;
      // Filter split, bias split alike.
      EXPECT_EQ(CompareSharded({"conv2d", {in, w, bias}, ConvAttrs(c)},
                               {"0-1", {"B", "S(0)", "S(0)", "S(1)"}, r}),
                "")
          << DataTypeName(t) << " rank " << r;
      // In-channel split: each rank's product is an addend (out P).
      EXPECT_EQ(CompareSharded({"conv2d", {in, w}, ConvAttrs(c)}, {"0-1", {"S(1)", "S(1)", "P"}, r}),
                "")
          << DataTypeName(t) << " rank " << r;
    }
  }
}

TEST(CudaReduceConvKernelsTest, Conv2dLargeBatchTakesImagesInChunks) {
  REQUIRE_DEVICE();
  // One image's im2col matrices: 64*3*3 x 128*128 f32 = 36 MiB, so 8
  // images (288 MiB) exceed conv.cu's 256 MiB scratch: chunks of 7 and 1.
  const ConvCase c{{8, 64, 128, 128}, {4, 64, 3, 3}, {"padding_before=1,1"}};
  const LocalTensor in = GridTensor(DataType::kFloat32, c.in, 1, -1, 1);
  const LocalTensor w = GridTensor(DataType::kFloat32, c.weight, 2, -1, 1);
  const LocalTensor bias = GridTensor(DataType::kFloat32, {c.weight[0]}, 3);
  EXPECT_EQ(CompareWithCpu({"conv2d", {in, w, bias}, ConvAttrs(c)}), "");
}

TEST(CudaReduceConvKernelsTest, Conv2dBadLayoutsAreStatuses) {
  REQUIRE_DEVICE();
  const ConvCase& c = ConvCases()[0];
  const LocalTensor in = GridTensor(DataType::kFloat32, c.in, 1);
  const LocalTensor w = GridTensor(DataType::kFloat32, c.weight, 2);
  // Channels split in the input only; a split image height.
  EXPECT_EQ(SameError(absl::StatusCode::kInternal, "conv2d", {in, w}, ConvAttrs(c), "0-1",
                      {"S(1)", "B", "P"}),
            "");
  EXPECT_EQ(SameError(absl::StatusCode::kInternal, "conv2d", {in, w}, ConvAttrs(c), "0-1",
                      {"S(2)", "B", "S(2)"}),
            "");
}

// -------------------------------------------------------------- argwhere --

TEST(CudaReduceConvKernelsTest, ArgwhereMatchesCpu) {
  REQUIRE_DEVICE();
  for (const char* index : {"dtype=i32", "dtype=i64"}) {
    for (DataType t : {DataType::kFloat32, DataType::kFloat64, DataType::kFloat16,
                       DataType::kBFloat16, DataType::kInt8, DataType::kInt32, DataType::kInt64,
                       DataType::kUInt8}) {
      // Mostly zeros and ones; 5000 elements span many scan blocks.
      for (const std::vector<int64_t>& dims :
           {std::vector<int64_t>{7}, {3, 4, 5}, {50, 100}, {2, 3, 2, 2, 3}}) {
        EXPECT_EQ(CompareWithCpu({"argwhere", {IntTensor(t, dims, 5, 0, 1)}, {index}}), "")
            << DataTypeName(t) << " " << index;
      }
      // All zero: output_size 0 and every row zero.
      EXPECT_EQ(CompareWithCpu({"argwhere", {IntTensor(t, {4, 3}, 5, 0, 0)}, {index}}), "")
          << DataTypeName(t) << " " << index;
    }
    EXPECT_EQ(CompareWithCpu({"argwhere", {testing::BoolTensor({6, 7}, 3)}, {index}}), "")
        << index;
    // NaN is nonzero.
    const double nan = std::numeric_limits<double>::quiet_NaN();
    EXPECT_EQ(CompareWithCpu({"argwhere",
                              {testing::Tensor(DataType::kFloat32, {2, 3}, {0, 1.5, 0, -2, 0, nan})},
                              {index}}),
              "")
        << index;
  }
}

TEST(CudaReduceConvKernelsTest, ArgwhereOfASplitInputIsAStatus) {
  REQUIRE_DEVICE();
  EXPECT_EQ(SameError(absl::StatusCode::kInternal, "argwhere",
                      {GridTensor(DataType::kFloat32, {4, 3}, 1)}, {}, "0-1",
                      {"S(0)", "B", "B"}),
            "");
}

}  // namespace
}  // namespace oneflow_sbp
