// The CUDA kernels of the sentence-encoder ops against the CPU kernels on
// the same inputs (GPU only; main() prints "SKIPPED: no CUDA device"
// without one): scaled_dot_product_attention(_grad) with a key_padding_mask
// (bool, i32, i64; padded keys across the kernels' 64-row tiles, a batch
// entry that is all padding, causal and not), masked_mean_pool(_grad) with
// every mask dtype, and l2_normalize(_grad) on both sides of epsilon; one
// rank and the split layouts of their rules.
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "gtest/gtest.h"
#include "oneflow_sbp/storage/local_tensor.h"
#include "tests/kernels/cuda_compare.h"
#include "tests/support/kernel_test_util.h"

namespace oneflow_sbp {
namespace {

using testing::Case;
using testing::CompareSharded;
using testing::CompareWithCpu;
using testing::GridTensor;
using testing::Tensor;

const DataType kFloating[] = {DataType::kFloat32, DataType::kFloat64, DataType::kFloat16,
                              DataType::kBFloat16};

// [b, n] keep mask of dtype dt: row r keeps its first n - 7 * r positions
// (at least none); the last row keeps none when `last_empty`.
LocalTensor Keep(DataType dt, int64_t b, int64_t n, bool last_empty) {
  std::vector<double> m(b * n);
  for (int64_t r = 0; r < b; ++r) {
    for (int64_t j = 0; j < n; ++j) {
      m[r * n + j] = (last_empty && r == b - 1) || j >= n - 7 * r ? 0 : 1;
    }
  }
  return Tensor(dt, {b, n}, m);
}

TEST(CudaEncoderKernelsTest, MaskedAttentionMatchesCpu) {
  REQUIRE_DEVICE();
  // Keys past one 64-row tile, padded from inside the second tile; a
  // short sequence; the last batch entry all padding.
  struct Dims {
    int64_t b, h, sq, sk, d;
  };
  for (const Dims& s : std::vector<Dims>{{3, 2, 70, 130, 8}, {3, 2, 5, 9, 4}}) {
    for (DataType f : kFloating) {
      const LocalTensor q = GridTensor(f, {s.b, s.h, s.sq, s.d}, 1);
      const LocalTensor k = GridTensor(f, {s.b, s.h, s.sk, s.d}, 2);
      const LocalTensor v = GridTensor(f, {s.b, s.h, s.sk, s.d}, 3);
      const LocalTensor dout = GridTensor(f, {s.b, s.h, s.sq, s.d}, 4);
      for (DataType mt : {DataType::kBool, DataType::kInt32, DataType::kInt64}) {
        const LocalTensor m = Keep(mt, s.b, s.sk, true);
        for (const std::vector<std::string>& attrs :
             std::vector<std::vector<std::string>>{{}, {"causal=true"}}) {
          const std::string where = absl::StrCat(DataTypeName(f), " mask ", DataTypeName(mt),
                                                 " sk ", s.sk, attrs.empty() ? "" : " causal");
          const Case fwd{"scaled_dot_product_attention", {q, k, v, m}, attrs};
          const Case grad{"scaled_dot_product_attention_grad", {dout, q, k, v, m}, attrs};
          EXPECT_EQ(CompareWithCpu(fwd), "") << where;
          EXPECT_EQ(CompareWithCpu(grad), "") << where;
          // Batch split (the mask with it: rank 1 holds the all-padded
          // entry), heads split (the mask whole), query rows split.
          EXPECT_EQ(CompareSharded(fwd, {"0-1", {"S(0)", "S(0)", "S(0)", "S(0)", "S(0)"}, 1}), "")
              << where;
          EXPECT_EQ(CompareSharded(fwd, {"0-1", {"S(1)", "S(1)", "S(1)", "B", "S(1)"}, 1}), "")
              << where;
          EXPECT_EQ(CompareSharded(grad, {"0-1", {"S(2)", "S(2)", "B", "B", "B", "S(2)", "P",
                                                  "P"}, 1}),
                    "")
              << where;
        }
      }
    }
  }
}

TEST(CudaEncoderKernelsTest, MaskedMeanPoolMatchesCpu) {
  REQUIRE_DEVICE();
  for (DataType f : kFloating) {
    const LocalTensor x = GridTensor(f, {5, 20, 33}, 5);
    const LocalTensor dy = GridTensor(f, {5, 33}, 6);
    for (DataType mt : {DataType::kBool, DataType::kInt8, DataType::kInt32, DataType::kInt64,
                        DataType::kUInt8, DataType::kFloat32, DataType::kFloat64,
                        DataType::kFloat16, DataType::kBFloat16}) {
      const LocalTensor m = Keep(mt, 5, 20, true);
      const std::string where = absl::StrCat(DataTypeName(f), " mask ", DataTypeName(mt));
      const Case fwd{"masked_mean_pool", {x, m}, {}};
      const Case grad{"masked_mean_pool_grad", {dy, m}, {}};
      EXPECT_EQ(CompareWithCpu(fwd), "") << where;
      EXPECT_EQ(CompareWithCpu(grad), "") << where;
      EXPECT_EQ(CompareSharded(fwd, {"0-2", {"S(0)", "S(0)", "S(0)"}, 2}), "") << where;
      EXPECT_EQ(CompareSharded(fwd, {"0-1", {"S(2)", "B", "S(1)"}, 1}), "") << where;
      EXPECT_EQ(CompareSharded(grad, {"0-1", {"S(1)", "B", "S(2)"}, 1}), "") << where;
    }
  }
}

TEST(CudaEncoderKernelsTest, L2NormalizeMatchesCpu) {
  REQUIRE_DEVICE();
  for (DataType f : kFloating) {
    // Pairs and long rows of values in [-1, 1]: epsilon 0.9 puts some
    // pairs below it.
    const LocalTensor x = GridTensor(f, {6, 2, 300}, 7, -1, 1);
    const LocalTensor dy = GridTensor(f, {6, 2, 300}, 8);
    for (const std::vector<std::string>& attrs : std::vector<std::vector<std::string>>{
             {"axis=1", "epsilon=0.9"}, {"axis=-1"}, {"axis=0", "epsilon=0"}}) {
      const std::string where = absl::StrCat(DataTypeName(f), " ", attrs[0]);
      EXPECT_EQ(CompareWithCpu({"l2_normalize", {x}, attrs}), "") << where;
      EXPECT_EQ(CompareWithCpu({"l2_normalize_grad", {dy, x}, attrs}), "") << where;
    }
    const std::vector<std::string> attrs = {"axis=1", "epsilon=0.9"};
    EXPECT_EQ(CompareSharded({"l2_normalize", {x}, attrs}, {"0-1", {"S(2)", "S(2)"}, 1}), "");
    EXPECT_EQ(CompareSharded({"l2_normalize_grad", {dy, x}, attrs},
                             {"0-1", {"P", "B", "P"}, 1}),
              "");
  }
}

}  // namespace
}  // namespace oneflow_sbp
