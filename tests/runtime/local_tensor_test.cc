// LocalTensor and the element-type mapping: factories, empty shards,
// storage sharing and alignment, typed access, conversions, printing and
// the exact-equality helper.
#include "oneflow_sbp/storage/local_tensor.h"

#include <cmath>
#include <cstdint>
#include <limits>
#include <vector>

#include "gtest/gtest.h"
#include "oneflow_sbp/storage/element_type.h"
#include "tests/support/status_matchers.h"

using ::oneflow_sbp::matchers::StatusIs;

namespace oneflow_sbp {
namespace {

TEST(ElementType, MapsEveryDataType) {
  EXPECT_EQ(kDataTypeOf<Eigen::half>, DataType::kFloat16);
  EXPECT_EQ(kDataTypeOf<Eigen::bfloat16>, DataType::kBFloat16);
  EXPECT_EQ(kDataTypeOf<float>, DataType::kFloat32);
  EXPECT_EQ(kDataTypeOf<double>, DataType::kFloat64);
  EXPECT_EQ(kDataTypeOf<int8_t>, DataType::kInt8);
  EXPECT_EQ(kDataTypeOf<int32_t>, DataType::kInt32);
  EXPECT_EQ(kDataTypeOf<int64_t>, DataType::kInt64);
  EXPECT_EQ(kDataTypeOf<uint8_t>, DataType::kUInt8);
  EXPECT_EQ(kDataTypeOf<bool>, DataType::kBool);
  for (int i = 0; i < kNumDataTypes; ++i) {
    const DataType dt = static_cast<DataType>(i);
    const int size = VisitDataType(dt, [dt](auto tag) {
      using T = typename decltype(tag)::type;
      EXPECT_EQ(kDataTypeOf<T>, dt);
      return static_cast<int>(sizeof(T));
    });
    EXPECT_EQ(size, ByteSizeOf(dt)) << DataTypeName(dt);
  }
}

TEST(ElementType, ConversionsNeverOverflow) {
  EXPECT_EQ(ConvertElement<int32_t>(1e20), std::numeric_limits<int32_t>::max());
  EXPECT_EQ(ConvertElement<int32_t>(-1e20), std::numeric_limits<int32_t>::lowest());
  EXPECT_EQ(ConvertElement<int64_t>(std::nan("")), 0);
  EXPECT_EQ(ConvertElement<int64_t>(9.3e18), std::numeric_limits<int64_t>::max());
  EXPECT_EQ(ConvertElement<int32_t>(-2.7), -2);
  EXPECT_TRUE(ConvertElement<bool>(0.5));
  EXPECT_FALSE(ConvertElement<bool>(0.0));
  EXPECT_EQ(ConvertElement<float>(Eigen::half(1.5f)), 1.5f);
  EXPECT_EQ(static_cast<float>(ConvertElement<Eigen::bfloat16>(int64_t{3})), 3.0f);
  EXPECT_EQ(ConvertElement<int32_t>(Eigen::half(-7.0f)), -7);
}

TEST(LocalTensor, FactoriesAndTypedAccess) {
  absl::StatusOr<LocalTensor> t = LocalTensor::FromValues<float>({2, 3}, {1, 2, 3, 4, 5, 6});
  ASSERT_TRUE(t.ok()) << t.status();
  EXPECT_TRUE(t->defined());
  EXPECT_EQ(t->dtype(), DataType::kFloat32);
  EXPECT_EQ(t->rank(), 2);
  EXPECT_EQ(t->elem_cnt(), 6);
  EXPECT_EQ(t->byte_size(), 24);
  EXPECT_EQ(t->data<float>()[4], 5.0f);
  EXPECT_EQ(t->ToString(), "f32[2,3] {1, 2, 3, 4, 5, 6}");
  EXPECT_EQ(t->ToString(2), "f32[2,3] {1, 2, ...}");

  absl::StatusOr<LocalTensor> z = LocalTensor::Zeros(DataType::kInt64, {3});
  ASSERT_TRUE(z.ok());
  EXPECT_EQ(z->ToDoubles(), (std::vector<double>{0, 0, 0}));

  absl::StatusOr<LocalTensor> f = LocalTensor::Full(DataType::kBFloat16, {2}, 2.5);
  ASSERT_TRUE(f.ok());
  EXPECT_EQ(static_cast<float>(f->data<Eigen::bfloat16>()[1]), 2.5f);

  absl::StatusOr<LocalTensor> b = LocalTensor::FromValues<bool>({3}, {true, false, true});
  ASSERT_TRUE(b.ok());
  EXPECT_EQ(b->ToString(), "bool[3] {true, false, true}");

  absl::StatusOr<LocalTensor> d = LocalTensor::FromDoubles(DataType::kFloat16, {2}, {0.5, -3});
  ASSERT_TRUE(d.ok());
  EXPECT_EQ(d->GetDouble(1), -3.0);
}

TEST(LocalTensor, ScalarsAndEmptyShards) {
  absl::StatusOr<LocalTensor> s = LocalTensor::FromValues<double>({}, {4.0});
  ASSERT_TRUE(s.ok());
  EXPECT_EQ(s->rank(), 0);
  EXPECT_EQ(s->elem_cnt(), 1);
  EXPECT_EQ(s->ToString(), "f64[] {4}");

  absl::StatusOr<LocalTensor> e = LocalTensor::Empty(DataType::kFloat32, {0, 5});
  ASSERT_TRUE(e.ok());
  EXPECT_EQ(e->elem_cnt(), 0);
  EXPECT_EQ(e->byte_size(), 0);
  EXPECT_NE(e->raw_data(), nullptr);
  EXPECT_EQ(e->ToString(), "f32[0,5] {}");
  EXPECT_TRUE(ExactlyEqual(*e, e->Clone()));
}

TEST(LocalTensor, BadDimsAndCountsAreErrors) {
  EXPECT_THAT(LocalTensor::Empty(DataType::kFloat32, {2, -1}),
            StatusIs(absl::StatusCode::kInvalidArgument));
  EXPECT_THAT(LocalTensor::Empty(DataType::kFloat32, {int64_t{1} << 40, int64_t{1} << 40})
                .status()
                ,
            StatusIs(absl::StatusCode::kInvalidArgument));
  absl::Status s = LocalTensor::FromValues<float>({2, 2}, {1, 2, 3}).status();
  EXPECT_THAT(s, StatusIs(absl::StatusCode::kInvalidArgument));
  EXPECT_NE(s.message().find("3 values for dims [2,2]"), absl::string_view::npos) << s;
  EXPECT_THAT(LocalTensor::Empty(DataType::kFloat32, {2}, DeviceType::kCuda),
            StatusIs(absl::StatusCode::kUnimplemented));
}

TEST(LocalTensor, HandlesShareStorageAndCloneCopies) {
  LocalTensor a = *LocalTensor::FromValues<int32_t>({2}, {1, 2});
  LocalTensor b = a;
  LocalTensor c = a.Clone();
  EXPECT_TRUE(a.SharesStorageWith(b));
  EXPECT_FALSE(a.SharesStorageWith(c));
  b.data<int32_t>()[0] = 9;
  EXPECT_EQ(a.data<int32_t>()[0], 9);
  EXPECT_EQ(c.data<int32_t>()[0], 1);
  EXPECT_EQ(reinterpret_cast<uintptr_t>(a.raw_data()) % Storage::kAlignment, 0u);
  EXPECT_EQ(a.device(), DeviceType::kCpu);
  LocalTensor undefined;
  EXPECT_FALSE(undefined.defined());
  EXPECT_EQ(undefined.ToString(), "undefined");
}

TEST(LocalTensor, DescribeMismatch) {
  LocalTensor a = *LocalTensor::FromValues<float>({2, 2}, {1, 2, 3, std::nanf("")});
  EXPECT_EQ(DescribeMismatch(a, a.Clone()), "");  // NaN equals NaN
  LocalTensor b = a.Clone();
  b.data<float>()[2] = 7;
  EXPECT_EQ(DescribeMismatch(a, b), "element 2 [1,0]: 3 vs 7");
  EXPECT_EQ(DescribeMismatch(a, *LocalTensor::Zeros(DataType::kFloat64, {2, 2})),
            "dtype f32 vs f64");
  EXPECT_EQ(DescribeMismatch(a, *LocalTensor::Zeros(DataType::kFloat32, {4})),
            "dims [2,2] vs [4]");
  LocalTensor big1 = *LocalTensor::FromValues<int64_t>({1}, {(int64_t{1} << 60) + 1});
  LocalTensor big2 = *LocalTensor::FromValues<int64_t>({1}, {int64_t{1} << 60});
  EXPECT_FALSE(ExactlyEqual(big1, big2));  // compared as int64, not as double
}

TEST(LocalTensor, RowMajorStridesAndCounts) {
  EXPECT_EQ(RowMajorStrides({2, 3, 4}), (LocalDims{12, 4, 1}));
  EXPECT_EQ(RowMajorStrides({}), LocalDims{});
  EXPECT_EQ(*CheckedElemCount({3, 0, 5}), 0);
  EXPECT_EQ(*CheckedElemCount({}), 1);
  EXPECT_EQ(DimsToString({2, 0}), "[2,0]");
}

}  // namespace
}  // namespace oneflow_sbp
