// The CUDA embedding, embedding_grad and sparse_softmax_cross_entropy[_ms]
// kernels (and grads) against the CPU kernels on the same inputs (GPU only;
// part of cuda_kernels_test, whose main() prints "SKIPPED: no CUDA device"
// without one): one rank, vocab-parallel and class-split layouts (the _ms
// class split on an in-process world of rank threads sharing the device),
// and the error cases (bad id, bad label, a layout that cannot be computed
// locally).
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/strings/str_cat.h"
#include "gtest/gtest.h"
#include "oneflow_sbp/storage/local_tensor.h"
#include "comm/inprocess_world.h"
#include "tests/kernels/cuda_compare.h"
#include "tests/support/kernel_test_util.h"
#include "tests/support/status_matchers.h"

using ::oneflow_sbp::matchers::StatusIs;

namespace oneflow_sbp {
namespace {

using testing::Case;
using testing::CompareSharded;
using testing::CompareWithCpu;
using testing::GridTensor;
using testing::IntTensor;
using testing::RunOnRank;

const DataType kFloatingTypes[] = {DataType::kFloat32, DataType::kFloat64, DataType::kFloat16,
                                   DataType::kBFloat16};
const DataType kIdTypes[] = {DataType::kInt32, DataType::kInt64};

absl::Status CudaError(const std::string& op, const std::vector<LocalTensor>& inputs,
                       const std::vector<std::string>& attrs, const std::string& placement,
                       const std::vector<std::string>& signature, int64_t rank = 0) {
  return RunOnRank(op, inputs, attrs, placement, signature, rank, DeviceType::kCuda).status();
}

// ---------------------------------------------------------------- embedding --

TEST(CudaIndexKernelsTest, EmbeddingMatchesCpu) {
  REQUIRE_DEVICE();
  for (DataType id : kIdTypes) {
    const LocalTensor ids = IntTensor(id, {3, 5}, 1, 0, 6);  // vocab 7
    // Every dtype: the rows are copied bytes.
    for (DataType t : {DataType::kFloat32, DataType::kFloat64, DataType::kFloat16,
                       DataType::kBFloat16, DataType::kInt32, DataType::kInt8}) {
      const LocalTensor weight = IntTensor(t, {7, 9}, 2);
      EXPECT_EQ(CompareWithCpu({"embedding", {weight, ids}}), "") << DataTypeName(t);
      // Vocab-parallel: each rank's zero rows for the others' ids, out P;
      // 7 rows over 3 ranks (uneven).
      for (int64_t r = 0; r < 2; ++r) {
        EXPECT_EQ(CompareSharded({"embedding", {weight, ids}}, {"0-1", {"S(0)", "B", "P"}, r}),
                  "")
            << DataTypeName(t) << " rank " << r;
      }
      EXPECT_EQ(CompareSharded({"embedding", {weight, ids}}, {"0-2", {"S(0)", "B", "P"}, 2}), "");
      // Ids split: rows of out split alike; embedding dim split.
      EXPECT_EQ(CompareSharded({"embedding", {weight, ids}}, {"0-1", {"B", "S(1)", "S(1)"}, 1}),
                "");
      EXPECT_EQ(CompareSharded({"embedding", {weight, ids}}, {"0-1", {"S(1)", "B", "S(2)"}, 1}),
                "");
    }
  }
}

TEST(CudaIndexKernelsTest, EmbeddingGradMatchesCpuAndIsReproducible) {
  REQUIRE_DEVICE();
  for (DataType id : kIdTypes) {
    // Repeated ids (several positions per row) and rows never indexed.
    const LocalTensor ids = IntTensor(id, {4, 6}, 3, 0, 9);  // vocab 11
    for (DataType t : kFloatingTypes) {
      const LocalTensor weight = GridTensor(t, {11, 5}, 4);
      const LocalTensor dy = GridTensor(t, {4, 6, 5}, 5);
      for (const std::vector<std::string>& attrs : std::vector<std::vector<std::string>>{
               {}, {"padding_idx=3"}, {"scale_grad_by_freq=true"},
               {"padding_idx=0", "scale_grad_by_freq=true"}}) {
        std::string where(DataTypeName(t));
        for (const std::string& a : attrs) where += " " + a;
        const Case c{"embedding_grad", {dy, weight, ids}, attrs};
        EXPECT_EQ(CompareWithCpu(c), "") << where;
        // Vocab-parallel: dx:S(0), each rank summing only its rows.
        EXPECT_EQ(CompareSharded(c, {"0-1", {"B", "S(0)", "B", "S(0)"}, 1}), "") << where;
        EXPECT_EQ(CompareSharded(c, {"0-2", {"B", "S(0)", "B", "S(0)"}, 2}), "") << where;
        // Same inputs twice: the same bits (no atomics).
        absl::StatusOr<std::vector<LocalTensor>> a =
            RunOnRank(c.op, c.inputs, c.attrs, "cuda:0", {"B", "B", "B", "B"}, 0,
                      DeviceType::kCuda);
        absl::StatusOr<std::vector<LocalTensor>> b =
            RunOnRank(c.op, c.inputs, c.attrs, "cuda:0", {"B", "B", "B", "B"}, 0,
                      DeviceType::kCuda);
        ASSERT_TRUE(a.ok() && b.ok()) << a.status() << b.status();
        EXPECT_EQ(DescribeMismatch((*a)[0], (*b)[0]), "") << where;
      }
      // Positions split (dy, indices S(0)): dx is an addend (P).
      EXPECT_EQ(CompareSharded({"embedding_grad", {dy, weight, ids}},
                               {"0-1", {"S(0)", "B", "S(0)", "P"}, 1}),
                "");
    }
  }
}

TEST(CudaIndexKernelsTest, EmbeddingBadIdsAndLayoutsAreStatuses) {
  REQUIRE_DEVICE();
  const LocalTensor weight = GridTensor(DataType::kFloat32, {7, 4}, 1);
  for (DataType id : kIdTypes) {
    for (double bad : {7.0, -1.0}) {
      const LocalTensor ids = testing::Tensor(id, {3}, {1, bad, 2});
      absl::Status s = CudaError("embedding", {weight, ids}, {}, "cuda:0", {"B", "B", "B"});
      EXPECT_THAT(s, StatusIs(absl::StatusCode::kInvalidArgument)) << s;
      EXPECT_NE(std::string(s.message()).find(absl::StrCat("indices_0 holds ", bad,
                                                           " at local position 1")),
                std::string::npos)
          << s;
      s = CudaError("embedding_grad", {GridTensor(DataType::kFloat32, {3, 4}, 2), weight, ids},
                    {}, "cuda:0", {"B", "B", "B", "B"});
      EXPECT_THAT(s, StatusIs(absl::StatusCode::kInvalidArgument)) << s;
    }
  }
  // weight:S(0) with out B: a rank lacks rows it would have to write.
  const LocalTensor ids = testing::Tensor(DataType::kInt64, {2}, {0, 6});
  absl::Status s = CudaError("embedding", {weight, ids}, {}, "cuda:0-1", {"S(0)", "B", "B"});
  EXPECT_THAT(s, StatusIs(absl::StatusCode::kInternal)) << s;
  // scale_grad_by_freq with the positions split: counts need every id.
  s = CudaError("embedding_grad",
                {GridTensor(DataType::kFloat32, {2, 4}, 2), weight, ids},
                {"scale_grad_by_freq=true"}, "cuda:0-1", {"S(0)", "B", "S(0)", "P"});
  EXPECT_THAT(s, StatusIs(absl::StatusCode::kInternal)) << s;
  // embedding_grad of integer dy: no kernel.
  s = CudaError("embedding_grad",
                {IntTensor(DataType::kInt32, {2, 4}, 2), IntTensor(DataType::kInt32, {7, 4}, 3),
                 ids},
                {}, "cuda:0", {"B", "B", "B", "B"});
  EXPECT_THAT(s, StatusIs(absl::StatusCode::kUnimplemented)) << s;
  EXPECT_NE(std::string(s.message()).find("(dy_0)"), std::string::npos) << s;
}

// ------------------------------------------------------------ cross entropy --

const std::string kCe = "sparse_softmax_cross_entropy";
const std::string kCeMs = "sparse_softmax_cross_entropy_ms";

TEST(CudaIndexKernelsTest, SparseCrossEntropyAndGradMatchCpu) {
  REQUIRE_DEVICE();
  for (DataType id : kIdTypes) {
    for (DataType t : kFloatingTypes) {
      // 700 classes: several strides of a block; labels anywhere.
      for (const std::vector<int64_t>& dims :
           {std::vector<int64_t>{5, 700}, std::vector<int64_t>{2, 3, 9}}) {
        const int64_t depth = dims.back();
        const std::vector<int64_t> rows(dims.begin(), dims.end() - 1);
        const LocalTensor x = GridTensor(t, dims, 1, -4, 4);
        const LocalTensor label = IntTensor(id, rows, 2, 0, static_cast<int>(depth - 1));
        const std::string d = absl::StrCat("depth=", depth);
        const std::string where = absl::StrCat(DataTypeName(t), " ", DimsToString(dims));
        for (const std::string& op : {kCe, kCeMs}) {
          EXPECT_EQ(CompareWithCpu({op, {x, label}, {d}}), "") << op << " " << where;
          const LocalTensor prob = (*testing::RunOnce(op, {x, label}, {d}))[0];
          const LocalTensor dy = GridTensor(t, rows, 3);
          EXPECT_EQ(CompareWithCpu({op + "_grad", {dy, label, prob}, {d}}), "")
              << op << " " << where;
          // Rows split; and for the grad classes split too (nothing global).
          EXPECT_EQ(CompareSharded({op, {x, label}, {d}}, {"0-1", {"S(0)", "S(0)", "S(0)",
                                                               "S(0)"}, 1}),
                    "")
              << op << " " << where;
        }
        const int last = static_cast<int>(dims.size()) - 1;
        const std::string split = absl::StrCat("S(", last, ")");
        const LocalTensor prob = (*testing::RunOnce(kCeMs, {x, label}, {d}))[0];
        EXPECT_EQ(CompareSharded({kCeMs + "_grad", {GridTensor(t, rows, 3), label, prob}, {d}},
                                 {"0-1", {"B", "B", split, split}, 1}),
                  "")
            << where;
      }
    }
  }
}

TEST(CudaIndexKernelsTest, CrossEntropyRowsPastTheGridCapMatchCpu) {
  REQUIRE_DEVICE();
  // 70000 rows: more than GridFor's 65536 blocks, so blocks must stride on
  // to the rest (a one-pass grid would leave them poisoned).
  const LocalTensor x = GridTensor(DataType::kFloat32, {70000, 6}, 1, -4, 4);
  const LocalTensor label = IntTensor(DataType::kInt64, {70000}, 2, 0, 5);
  EXPECT_EQ(CompareWithCpu({kCe, {x, label}, {"depth=6"}}), "");
  const LocalTensor prob = (*testing::RunOnce(kCe, {x, label}, {"depth=6"}))[0];
  EXPECT_EQ(CompareWithCpu({kCe + "_grad",
                            {GridTensor(DataType::kFloat32, {70000}, 3), label, prob},
                            {"depth=6"}}),
            "");
}

// Each rank's local outputs of `c` on `placement` (ranks as threads of one
// in-process world: the class-split layout all-reduces across them) on the
// CPU and on the GPU; "" if every rank's outputs agree.
std::string CompareOnEveryRank(const Case& c, const std::string& ranks, int n,
                               const std::vector<std::string>& signature) {
  std::vector<absl::StatusOr<std::vector<LocalTensor>>> got[2];
  for (int dev = 0; dev < 2; ++dev) {
    const DeviceType device = dev == 0 ? DeviceType::kCpu : DeviceType::kCuda;
    got[dev].assign(n, absl::UnknownError("not run"));
    comm::InProcessOptions options;
    options.default_timeout = absl::Seconds(60);
    absl::StatusOr<std::vector<absl::Status>> ran = comm::RunRanks(
        n,
        [&](comm::Communicator& world) -> absl::Status {
          const int r = world.rank();
          got[dev][r] = RunOnRank(c.op, c.inputs, c.attrs,
                                  (dev == 0 ? "cpu:" : "cuda:") + ranks, signature, r, device,
                                  &world);
          return got[dev][r].status();
        },
        options);
    if (!ran.ok()) return std::string(ran.status().message());
  }
  for (int r = 0; r < n; ++r) {
    for (int dev = 0; dev < 2; ++dev) {
      if (!got[dev][r].ok()) {
        return absl::StrCat(dev == 0 ? "cpu" : "cuda", " rank ", r, ": ",
                            got[dev][r].status().message());
      }
    }
    for (size_t i = 0; i < got[0][r]->size(); ++i) {
      kernels::Tolerance tol = kernels::DefaultTolerance((*got[0][r])[i].dtype());
      tol.rtol *= 4;
      tol.atol *= 4;
      const std::string diff = kernels::CompareTensors((*got[1][r])[i], (*got[0][r])[i], tol);
      if (!diff.empty()) return absl::StrCat(c.op, " rank ", r, " output ", i, ": ", diff);
    }
  }
  return "";
}

TEST(CudaIndexKernelsTest, ClassSplitCrossEntropyMatchesCpuOnRankThreads) {
  REQUIRE_DEVICE();
  for (DataType t : kFloatingTypes) {
    // 7 classes over 2 and 3 ranks (uneven), 600 over 2.
    for (const auto& [depth, n] : std::vector<std::pair<int64_t, int>>{{7, 2}, {7, 3}, {600, 2}}) {
      const LocalTensor x = GridTensor(t, {5, depth}, 4, -4, 4);
      const LocalTensor label =
          IntTensor(DataType::kInt64, {5}, 5, 0, static_cast<int>(depth - 1));
      const std::string ranks = absl::StrCat("0-", n - 1);
      EXPECT_EQ(CompareOnEveryRank({kCeMs, {x, label}, {absl::StrCat("depth=", depth)}}, ranks,
                                   n, {"S(1)", "B", "S(1)", "P"}),
                "")
          << DataTypeName(t) << " depth " << depth << " on " << n;
    }
  }
  // Without a world the class split is refused, as on the CPU.
  const LocalTensor x = GridTensor(DataType::kFloat32, {4, 10}, 1);
  const LocalTensor label = IntTensor(DataType::kInt64, {4}, 2, 0, 9);
  const absl::Status s =
      CudaError(kCeMs, {x, label}, {"depth=10"}, "cuda:0-1", {"S(1)", "B", "S(1)", "P"});
  EXPECT_THAT(s, StatusIs(absl::StatusCode::kFailedPrecondition)) << s;
}

TEST(CudaIndexKernelsTest, CrossEntropyBadLabelsAndLayoutsAreStatuses) {
  REQUIRE_DEVICE();
  const LocalTensor x = GridTensor(DataType::kFloat32, {2, 4}, 1);
  for (DataType id : kIdTypes) {
    for (double bad : {-1.0, 4.0}) {
      const LocalTensor label = testing::Tensor(id, {2}, {0, bad});
      absl::Status s = CudaError(kCe, {x, label}, {"depth=4"}, "cuda:0", {"B", "B", "B", "B"});
      EXPECT_THAT(s, StatusIs(absl::StatusCode::kInvalidArgument)) << s;
      EXPECT_NE(std::string(s.message()).find(absl::StrCat("label_0 holds ", bad)),
                std::string::npos)
          << s;
      s = CudaError(kCe + "_grad", {GridTensor(DataType::kFloat32, {2}, 2), label, x},
                    {"depth=4"}, "cuda:0", {"B", "B", "B", "B"});
      EXPECT_THAT(s, StatusIs(absl::StatusCode::kInvalidArgument)) << s;
    }
  }
  // out:P with whole rows: every rank would add the full loss.
  const absl::Status s =
      CudaError(kCeMs, {x, IntTensor(DataType::kInt64, {2}, 2, 0, 3)}, {"depth=4"}, "cuda:0-1",
                {"B", "B", "B", "P"});
  EXPECT_THAT(s, StatusIs(absl::StatusCode::kInternal)) << s;
}

}  // namespace
}  // namespace oneflow_sbp
