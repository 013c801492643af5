// Reducing collectives on the in-process world for every dtype x {sum,
// max, min}: each chunk is reduced in ring order (member j + 1 first,
// member j last; collectives.h), every rank ends with the same bits, and
// in-place calls (all-reduce with send == recv, reduce-scatter into its
// own chunk of send) give the same results as out-of-place ones. The
// values are chosen so that a different summation order would change
// float sums.
#include <cstring>
#include <random>
#include <vector>

#include "Eigen/Core"
#include "absl/strings/str_cat.h"
#include "gtest/gtest.h"
#include "oneflow_sbp/values/data_type.h"
#include "oneflow_sbp/values/status_macros.h"
#include "oneflow_sbp/values/tensor_slice_view.h"
#include "comm/communicator.h"
#include "comm/inprocess_world.h"
#include "comm/reduce_op.h"

namespace oneflow_sbp::comm {
namespace {

// `count` elements of `dtype` for one rank: integers of every bit pattern,
// floats of mixed magnitudes (so sums depend on their order), a few NaNs
// for max and min.
std::vector<char> Addends(DataType dtype, ReduceOp op, int64_t count, uint32_t seed) {
  std::mt19937 rng(seed);
  const int64_t es = ByteSizeOf(dtype);
  std::vector<char> v(count * es);
  for (int64_t i = 0; i < count; ++i) {
    char* at = &v[i * es];
    const float f = (op != ReduceOp::kSum && rng() % 61 == 0)
                        ? NAN
                        : static_cast<float>(static_cast<int>(rng() % 2001) - 1000) /
                              static_cast<float>(1 << (rng() % 20));
    switch (dtype) {
      case DataType::kFloat16: {
        const Eigen::half h(f);
        std::memcpy(at, &h, 2);
        break;
      }
      case DataType::kBFloat16: {
        const Eigen::bfloat16 h(f);
        std::memcpy(at, &h, 2);
        break;
      }
      case DataType::kFloat32:
        std::memcpy(at, &f, 4);
        break;
      case DataType::kFloat64: {
        const double d = static_cast<double>(f) * 1.0000001;
        std::memcpy(at, &d, 8);
        break;
      }
      case DataType::kBool:
        *at = static_cast<char>(rng() % 3);  // 2 is true too
        break;
      default:
        for (int64_t b = 0; b < es; ++b) at[b] = static_cast<char>(rng() & 0xff);
    }
  }
  return v;
}

// Chunk [begin, end) of every rank's addends reduced in ring order for the
// chunk owned by member `owner`: owner + 1, owner + 2, ..., owner.
std::vector<char> RingOrder(const std::vector<std::vector<char>>& x, DataType dtype, ReduceOp op,
                            int owner, int64_t begin, int64_t end) {
  const int n = static_cast<int>(x.size());
  const int64_t es = ByteSizeOf(dtype);
  std::vector<char> acc(x[(owner + 1) % n].begin() + begin * es,
                        x[(owner + 1) % n].begin() + end * es);
  for (int d = 2; d <= n; ++d) {
    const std::vector<char>& r = x[(owner + d) % n];
    std::vector<char> next(acc.size());
    ReduceTo(op, dtype, acc.data(), r.data() + begin * es, next.data(), end - begin);
    acc = std::move(next);
  }
  return acc;
}

// memcmp over n bytes; an empty chunk (whose vector may hold null) matches.
bool SameBytes(const char* a, const char* b, size_t n) {
  return n == 0 || std::memcmp(a, b, n) == 0;
}

TEST(ReducingCollectives, EveryDtypeAndOpInRingOrderOnEveryRank) {
  for (int n : {2, 3, 4, 5}) {
    for (int t = 0; t < kNumDataTypes; ++t) {
      const DataType dtype = static_cast<DataType>(t);
      const int64_t es = ByteSizeOf(dtype);
      for (ReduceOp op : {ReduceOp::kSum, ReduceOp::kMax, ReduceOp::kMin}) {
        const int64_t count = 1001;  // odd: uneven chunks and kernel tails
        std::vector<std::vector<char>> x(n);
        for (int r = 0; r < n; ++r) x[r] = Addends(dtype, op, count, 1000 * t + 10 * r + n);
        // All-reduce chunk j (balanced parts) is owned by member j.
        std::vector<char> want(count * es);
        for (int j = 0; j < n; ++j) {
          const IndexRange part = BalancedPart(IndexRange{0, count}, n, j);
          const std::vector<char> c = RingOrder(x, dtype, op, j, part.begin, part.end);
          std::memcpy(&want[part.begin * es], c.data(), c.size());
        }
        // Reduce-scatter with uneven chunk counts (one empty).
        std::vector<int64_t> counts(n, 0);
        for (int j = 0; j < n; ++j) counts[j] = j == 1 ? 0 : count / n + j;
        counts[0] += count - [&] {
          int64_t s = 0;
          for (int64_t c : counts) s += c;
          return s;
        }();
        std::vector<int64_t> starts(n + 1, 0);
        for (int j = 0; j < n; ++j) starts[j + 1] = starts[j] + counts[j];
        CallOptions call;
        call.reduce_op = op;
        const std::string what =
            absl::StrCat(n, " ranks, ", DataTypeName(dtype), " ", ReduceOpName(op));
        absl::StatusOr<std::vector<absl::Status>> ran = RunRanks(n, [&](Communicator& w) {
          const int k = w.rank();
          // Out of place, then in place.
          std::vector<char> out(count * es);
          OFS_RETURN_IF_ERROR(w.AllReduce(x[k].data(), out.data(), count, dtype, call));
          EXPECT_TRUE(SameBytes(out.data(), want.data(), want.size())) << what << " rank " << k;
          std::vector<char> inplace = x[k];
          OFS_RETURN_IF_ERROR(w.AllReduce(inplace.data(), inplace.data(), count, dtype, call));
          EXPECT_TRUE(SameBytes(inplace.data(), want.data(), want.size()))
              << what << " in place, rank " << k;
          // Reduce-scatter into a separate buffer and into its own chunk.
          const std::vector<char> chunk =
              RingOrder(x, dtype, op, k, starts[k], starts[k + 1]);
          std::vector<char> rs(counts[k] * es + 1);
          OFS_RETURN_IF_ERROR(w.ReduceScatterV(x[k].data(), rs.data(), counts, dtype, call));
          EXPECT_TRUE(SameBytes(rs.data(), chunk.data(), chunk.size())) << what << " rank " << k;
          std::vector<char> mine = x[k];
          char* own = mine.data() + starts[k] * es;
          OFS_RETURN_IF_ERROR(w.ReduceScatterV(mine.data(), own, counts, dtype, call));
          EXPECT_TRUE(SameBytes(own, chunk.data(), chunk.size()))
              << what << " into own chunk, rank " << k;
          return absl::OkStatus();
        });
        ASSERT_TRUE(ran.ok()) << ran.status();
        for (const absl::Status& s : *ran) EXPECT_TRUE(s.ok()) << what << ": " << s;
      }
    }
  }
}

}  // namespace
}  // namespace oneflow_sbp::comm
