// Region copies between shards and packed buffers: every region of small
// shards against an element-by-element reference, adds, and bad regions.
#include "runtime/region_copy.h"

#include <vector>

#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "tests/support/status_matchers.h"

using ::oneflow_sbp::matchers::StatusIs;

namespace oneflow_sbp::boxing {
namespace {

using ::testing::HasSubstr;

TensorSlice Box(std::vector<IndexRange> ranges) {
  std::vector<int64_t> dims;
  for (IndexRange r : ranges) dims.push_back(std::max<int64_t>(1, r.end));
  TensorSlice s(*Shape::Make(dims));
  for (size_t d = 0; d < ranges.size(); ++d) s.set_range(static_cast<int>(d), ranges[d]);
  return s;
}

// The value of global index (i, j, k) in every test tensor.
double Value(const std::vector<int64_t>& idx) {
  double v = 0;
  for (int64_t x : idx) v = v * 100 + static_cast<double>(x);
  return v;
}

LocalTensor ShardOf(const TensorSlice& slice, DataType dtype) {
  std::vector<int64_t> dims;
  for (IndexRange r : slice.ranges()) dims.push_back(r.size());
  LocalTensor t = *LocalTensor::Zeros(dtype, dims);
  std::vector<int64_t> idx(slice.rank());
  for (int64_t e = 0; e < t.elem_cnt(); ++e) {
    int64_t rest = e;
    for (int d = slice.rank() - 1; d >= 0; --d) {
      idx[d] = slice.range(d).begin + rest % dims[d];
      rest /= dims[d];
    }
    t.SetDouble(e, Value(idx));
  }
  return t;
}

TEST(RegionCopy, EveryRegionOfA3DShardPacksInRowMajorOrder) {
  const TensorSlice slice = Box({{2, 5}, {1, 4}, {0, 4}});
  const LocalTensor shard = ShardOf(slice, DataType::kFloat64);
  int checked = 0;
  for (int64_t a = 2; a <= 5; ++a) for (int64_t b = a; b <= 5; ++b)
  for (int64_t c = 1; c <= 4; ++c) for (int64_t d = c; d <= 4; ++d)
  for (int64_t e = 0; e <= 4; e += 2) for (int64_t f = e; f <= 4; f += 2) {
    const TensorSlice region = Box({{a, b}, {c, d}, {e, f}});
    std::vector<double> packed(region.elem_cnt());
    ASSERT_TRUE(runtime::PackRegion(shard, slice, region, packed.data()).ok());
    EXPECT_EQ(ShardOf(region, DataType::kFloat64).ToDoubles(), packed) << region.ToString();
    ++checked;
  }
  EXPECT_GT(checked, 500);
}

TEST(RegionCopy, UnpackCopiesOrAddsAndCopyRegionMovesBetweenShards) {
  const TensorSlice from_slice = Box({{0, 4}, {0, 6}});
  const TensorSlice to_slice = Box({{2, 6}, {3, 6}});
  const TensorSlice region = Box({{2, 4}, {3, 6}});
  const LocalTensor from = ShardOf(from_slice, DataType::kInt32);
  LocalTensor to = *LocalTensor::Zeros(DataType::kInt32, {4, 3});
  ASSERT_TRUE(runtime::CopyRegion(from, from_slice, region, &to, to_slice, runtime::RegionOp::kCopy).ok());
  ASSERT_TRUE(runtime::CopyRegion(from, from_slice, region, &to, to_slice, runtime::RegionOp::kAdd).ok());
  for (int64_t i = 0; i < 4; ++i) {
    for (int64_t j = 0; j < 3; ++j) {
      const double want = i < 2 ? 2 * Value({i + 2, j + 3}) : 0;
      EXPECT_EQ(to.GetDouble(i * 3 + j), want) << i << "," << j;
    }
  }
}

TEST(RegionCopy, ScalarsAndEmptyRegions) {
  const TensorSlice scalar;
  LocalTensor s = *LocalTensor::Full(DataType::kFloat32, {}, 7);
  float out = 0;
  ASSERT_TRUE(runtime::PackRegion(s, scalar, scalar, &out).ok());
  EXPECT_EQ(out, 7);
  const TensorSlice slice = Box({{0, 3}, {0, 2}});
  const TensorSlice empty = Box({{1, 1}, {0, 2}});
  const LocalTensor shard = ShardOf(slice, DataType::kFloat32);
  EXPECT_TRUE(runtime::PackRegion(shard, slice, empty, nullptr).ok());
}

TEST(RegionCopy, AddsHalvesInFloatAndOrsBools) {
  LocalTensor h = *LocalTensor::Full(DataType::kBFloat16, {3}, 1.5);
  const LocalTensor g = *LocalTensor::Full(DataType::kBFloat16, {3}, 2.0);
  runtime::AddInto(DataType::kBFloat16, h.raw_data(), g.raw_data(), 3);
  EXPECT_EQ(h.GetDouble(2), 3.5);
  LocalTensor b = *LocalTensor::FromValues<bool>({2}, {false, true});
  const LocalTensor c = *LocalTensor::FromValues<bool>({2}, {true, false});
  runtime::AddInto(DataType::kBool, b.raw_data(), c.raw_data(), 2);
  EXPECT_EQ(b.ToDoubles(), (std::vector<double>{1, 1}));
}

TEST(RegionCopy, RegionsOutsideTheShardAreErrors) {
  const TensorSlice slice = Box({{2, 4}, {0, 3}});
  const LocalTensor shard = ShardOf(slice, DataType::kFloat32);
  std::vector<float> buf(16);
  absl::Status s = runtime::PackRegion(shard, slice, Box({{1, 3}, {0, 3}}), buf.data());
  EXPECT_THAT(s, StatusIs(absl::StatusCode::kInvalidArgument));
  EXPECT_THAT(std::string(s.message()), HasSubstr("not inside shard"));
  LocalTensor wrong = *LocalTensor::Zeros(DataType::kFloat32, {3, 3});
  EXPECT_FALSE(runtime::CheckRegion(wrong, slice, slice).ok());
  LocalTensor other = *LocalTensor::Zeros(DataType::kFloat64, {2, 3});
  EXPECT_FALSE(runtime::CopyRegion(shard, slice, slice, &other, slice, runtime::RegionOp::kCopy).ok());
}

}  // namespace
}  // namespace oneflow_sbp::boxing
