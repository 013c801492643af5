// Cache stress: 8 threads issue 10^6 mixed lookups, inserts and clears on
// small caches, and every answer must equal the single-thread answer while
// the counters stay consistent. Runs under --config=tsan in CI
// (docs/RELIABILITY.md, "Cache stress").
//
// Two levels:
//   - the InferCache alone, with precomputed values (Lookup, Insert, Clear),
//     so that 10^6 operations cost little beyond the cache itself and the
//     4-entry cache evicts all the time;
//   - the Engine (Infer, Plan, ClearCaches) over its InferCache and the
//     planner's bounded plan cache, which infers and plans on every miss.
//
// OFS_STRESS_OPS (environment) overrides the total operation count per test,
// for longer runs by hand.
#include <cstdint>
#include <cstdlib>
#include <memory>
#include <random>
#include <string>
#include <thread>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/strings/numbers.h"
#include "boxing/planner.h"
#include "gtest/gtest.h"
#include "engine/engine.h"
#include "oneflow_sbp/inference/infer_cache.h"
#include "oneflow_sbp/inference/infer_key.h"
#include "oneflow_sbp/inference/oneflow_selection.h"
#include "oneflow_sbp/inference/signature_inference.h"
#include "tests/support/infer_test_util.h"

namespace oneflow_sbp::testing {
namespace {

constexpr int kThreads = 8;

int64_t TotalOps(int64_t default_ops) {
  const char* env = std::getenv("OFS_STRESS_OPS");
  int64_t ops = 0;
  if (env != nullptr && absl::SimpleAtoi(env, &ops) && ops > 0) return ops;
  return default_ops;
}

InferRequest MakeRequest(const std::string& op, const std::string& placement,
                         const std::vector<std::string>& descs,
                         const std::vector<std::string>& sbps) {
  absl::StatusOr<std::shared_ptr<const OpCall>> call =
      MakeCall(op, static_cast<int>(descs.size()));
  EXPECT_TRUE(call.ok()) << call.status();
  InferRequest r;
  r.op = *call;
  r.placement = *Placement::Parse(placement);
  for (size_t i = 0; i < descs.size(); ++i) {
    r.inputs.push_back(InferInput{*TensorDesc::Parse(descs[i]), *NdSbp::Parse(sbps[i])});
  }
  return r;
}

// 20 requests that succeed (matmul and relu on a 2x2 mesh, relu on 4 ranks)
// and one that fails (a constraint no signature meets), so that uncached
// errors are stressed too.
std::vector<InferRequest> InferPool() {
  std::vector<InferRequest> pool;
  for (const char* a : {"(S(0),B)", "(B,S(0))", "(P,B)", "(B,B)"}) {
    for (const char* b : {"(B,B)", "(B,S(1))", "(S(0),B)"}) {
      pool.push_back(MakeRequest("matmul", "cpu:0-3 [2,2]", {"f32[64,32]", "f32[32,48]"}, {a, b}));
    }
  }
  for (const char* a : {"(S(0),S(1))", "(P,P)", "(S(1),B)", "(B,P)"}) {
    pool.push_back(MakeRequest("relu", "cpu:0-3 [2,2]", {"f32[8,8]"}, {a}));
  }
  for (const char* a : {"S(0)", "S(1)", "B", "P"}) {
    pool.push_back(MakeRequest("relu", "cpu:0-3", {"f32[8,8]"}, {a}));
  }
  InferRequest bad = MakeRequest("relu", "cpu:0-1", {"f32[8,8]"}, {"S(0)"});
  bad.constraints = {std::nullopt, *NdSbp::Parse("P")};
  pool.push_back(bad);
  return pool;
}

std::vector<boxing::PlanRequest> PlanPool() {
  std::vector<boxing::PlanRequest> pool;
  const Placement mesh = *Placement::Parse("cpu:0-3 [2,2]");
  const std::vector<const char*> sbps = {"(S(0),B)", "(B,S(1))", "(P,B)", "(S(0),S(1))"};
  for (const char* from : sbps) {
    for (const char* to : sbps) {
      if (std::string(from) == to) continue;
      pool.push_back(boxing::PlanRequest{*Shape::Parse("[16,32]"), DataType::kFloat32, mesh,
                                         *NdSbp::Parse(from), mesh, *NdSbp::Parse(to)});
    }
  }
  return pool;
}

// What a single thread answers, fresh, for every request of the pools.
struct Reference {
  std::vector<absl::StatusOr<InferResult>> infer;
  std::vector<std::shared_ptr<const boxing::BoxingPlan>> plans;
};

Reference SingleThreadReference(const std::vector<InferRequest>& infer,
                                const std::vector<boxing::PlanRequest>& plans) {
  Reference ref;
  for (const InferRequest& r : infer) ref.infer.push_back(InferSignature(r));
  boxing::BoxingPlanner planner;
  for (const boxing::PlanRequest& p : plans) {
    absl::StatusOr<std::shared_ptr<const boxing::BoxingPlan>> plan = planner.Plan(p);
    EXPECT_TRUE(plan.ok()) << plan.status();
    ref.plans.push_back(*plan);
  }
  return ref;
}

bool SameInfer(const absl::StatusOr<InferResult>& want,
               const absl::StatusOr<std::shared_ptr<const InferResult>>& got) {
  if (!want.ok() || !got.ok()) return want.status().code() == got.status().code();
  return (*got)->signature == want->signature && (*got)->output_descs == want->output_descs &&
         (*got)->num_candidates == want->num_candidates;
}

bool SameInfer(const absl::StatusOr<InferResult>& want,
               const absl::StatusOr<const InferResult*>& got) {
  if (!want.ok() || !got.ok()) return want.status().code() == got.status().code();
  return (*got)->signature == want->signature && (*got)->output_descs == want->output_descs &&
         (*got)->num_candidates == want->num_candidates;
}

bool SamePlan(const boxing::BoxingPlan& want, const boxing::BoxingPlan& got) {
  return got.steps.size() == want.steps.size() && got.total_bytes() == want.total_bytes() &&
         got.max_rank_bytes() == want.max_rank_bytes() && got.time_s() == want.time_s() &&
         got.ranks == want.ranks;
}

// Skewed picks, as a real workload has hot keys: half the picks come from
// the first quarter of the pool.
size_t Pick(std::mt19937_64& rng, size_t n) {
  const size_t hot = std::max<size_t>(1, n / 4);
  return (rng() & 1) ? rng() % hot : rng() % n;
}

// Per-thread tallies; summed after the join.
struct Tally {
  uint64_t lookups = 0, lookup_hits = 0, inserts = 0, clears = 0, plans = 0, infers = 0;
  uint64_t wrong = 0;
};

// Runs `body(thread, rng, tally)` on kThreads threads and returns the sum.
template <typename Body>
Tally RunThreads(int64_t ops_per_thread, Body body) {
  std::vector<Tally> tallies(kThreads);
  std::vector<std::thread> threads;
  for (int t = 0; t < kThreads; ++t) {
    threads.emplace_back([&, t] {
      std::mt19937_64 rng(1000 + t);
      for (int64_t i = 0; i < ops_per_thread; ++i) body(rng, tallies[t]);
    });
  }
  for (std::thread& th : threads) th.join();
  Tally sum;
  for (const Tally& t : tallies) {
    sum.lookups += t.lookups;
    sum.lookup_hits += t.lookup_hits;
    sum.inserts += t.inserts;
    sum.clears += t.clears;
    sum.plans += t.plans;
    sum.infers += t.infers;
    sum.wrong += t.wrong;
  }
  return sum;
}

// The request pool, its single-thread answers, a small cache and the
// `oneflow` policy of every request.
struct CacheFixture {
  CacheFixture(size_t capacity, int shards) {
    InferCache::Options options;
    options.capacity = capacity;
    options.shards = shards;
    cache = *InferCache::Create(options);
    for (const InferRequest& r : pool) policies.push_back(OneFlowSelectionFor(r.placement));
  }
  const std::vector<InferRequest> pool = InferPool();
  const Reference ref = SingleThreadReference(pool, {});
  std::unique_ptr<InferCache> cache;
  std::vector<std::shared_ptr<const SelectionPolicy>> policies;
};

TEST(CacheStress, InferCacheLookupsInsertsAndClearsAgreeWithOneThread) {
  // 2 entries per shard: almost every insert evicts.
  const CacheFixture f(/*capacity=*/4, /*shards=*/2);
  const std::vector<InferRequest>& pool = f.pool;
  const Reference& ref = f.ref;
  InferCache* cache = f.cache.get();
  const auto& policies = f.policies;

  const int64_t per_thread = TotalOps(1000000) / kThreads;
  const Tally sum = RunThreads(per_thread, [&](std::mt19937_64& rng, Tally& tally) {
    const size_t k = Pick(rng, pool.size() - 1);  // the failing request has no value
    const uint64_t what = rng() % 1000;
    if (what < 2) {
      cache->Clear();
      ++tally.clears;
    } else if (what < 600) {
      ++tally.lookups;
      std::shared_ptr<const InferResult> hit = cache->Lookup(pool[k], policies[k]);
      if (hit != nullptr) {
        ++tally.lookup_hits;
        if (!SameInfer(ref.infer[k], hit)) ++tally.wrong;
      }
    } else {
      ++tally.inserts;
      std::shared_ptr<const InferResult> v = cache->Insert(pool[k], policies[k], *ref.infer[k]);
      if (!SameInfer(ref.infer[k], v)) ++tally.wrong;
    }
  });

  EXPECT_EQ(sum.wrong, 0u);
  EXPECT_EQ(sum.lookups + sum.inserts + sum.clears, static_cast<uint64_t>(per_thread) * kThreads);
  const InferCache::Stats s = cache->stats();
  // Every lookup is counted exactly once, as a hit or a miss.
  EXPECT_EQ(s.hits, sum.lookup_hits);
  EXPECT_EQ(s.hits + s.misses, sum.lookups);
  // An insert of a key already present stores nothing.
  EXPECT_LE(s.inserts, sum.inserts);
  EXPECT_GT(s.inserts, 0u);
  EXPECT_LE(s.evictions, s.inserts);
  EXPECT_GT(s.evictions, 0u);
  EXPECT_LE(s.size, s.capacity);
  EXPECT_EQ(s.capacity, 4u);
  cache->Clear();
  EXPECT_EQ(cache->stats().size, 0u);
  std::printf("infer cache: %llu ops, %llu lookups (%llu hits), %llu inserts (%llu stored, "
              "%llu evicted), %llu clears\n",
              static_cast<unsigned long long>(per_thread * kThreads),
              static_cast<unsigned long long>(sum.lookups),
              static_cast<unsigned long long>(s.hits),
              static_cast<unsigned long long>(sum.inserts),
              static_cast<unsigned long long>(s.inserts),
              static_cast<unsigned long long>(s.evictions),
              static_cast<unsigned long long>(sum.clears));
}

// Without Clear, the stored entries are accounted for exactly.
TEST(CacheStress, InferCacheSizeIsInsertsMinusEvictionsWithoutClears) {
  const CacheFixture f(/*capacity=*/8, /*shards=*/4);
  const std::vector<InferRequest>& pool = f.pool;
  const Reference& ref = f.ref;
  InferCache* cache = f.cache.get();
  const auto& policies = f.policies;
  const int64_t per_thread = TotalOps(200000) / kThreads;
  const Tally sum = RunThreads(per_thread, [&](std::mt19937_64& rng, Tally& tally) {
    const size_t k = Pick(rng, pool.size() - 1);
    if (rng() % 2) {
      ++tally.lookups;
      std::shared_ptr<const InferResult> hit = cache->Lookup(pool[k], policies[k]);
      if (hit != nullptr && !SameInfer(ref.infer[k], hit)) ++tally.wrong;
    } else {
      ++tally.inserts;
      if (!SameInfer(ref.infer[k], cache->Insert(pool[k], policies[k], *ref.infer[k]))) {
        ++tally.wrong;
      }
    }
  });
  EXPECT_EQ(sum.wrong, 0u);
  const InferCache::Stats s = cache->stats();
  EXPECT_EQ(s.hits + s.misses, sum.lookups);
  EXPECT_EQ(s.size, s.inserts - s.evictions);
  EXPECT_LE(s.size, s.capacity);
}

// An engine with tiny caches (4 infer-cache shards), so that eviction races.
std::unique_ptr<engine::Engine> SmallEngine(size_t infer_capacity, size_t plan_capacity) {
  engine::Engine::Options options;
  options.infer_cache.capacity = infer_capacity;
  options.infer_cache.shards = 4;
  options.plan_cache_capacity = plan_capacity;
  return *engine::Engine::Create(options);
}

TEST(CacheStress, EngineInferPlanAndClearAgreeWithOneThread) {
  const std::vector<InferRequest> infer = InferPool();
  const std::vector<boxing::PlanRequest> plans = PlanPool();
  const Reference ref = SingleThreadReference(infer, plans);
  std::unique_ptr<engine::Engine> engine = SmallEngine(/*infer_capacity=*/16, /*plan_capacity=*/6);

  // Misses infer or plan for real, so this level runs fewer operations.
  const int64_t per_thread = TotalOps(200000) / kThreads;
  const Tally sum = RunThreads(per_thread, [&](std::mt19937_64& rng, Tally& tally) {
    const uint64_t what = rng() % 1000;
    if (what < 1) {
      engine->ClearCaches();
      ++tally.clears;
    } else if (what < 800) {
      const size_t k = Pick(rng, infer.size());
      ++tally.infers;
      if (!SameInfer(ref.infer[k], engine->Infer(infer[k]))) ++tally.wrong;
    } else {
      const size_t k = Pick(rng, plans.size());
      ++tally.plans;
      absl::StatusOr<std::shared_ptr<const boxing::BoxingPlan>> plan = engine->Plan(plans[k]);
      if (!plan.ok() || !SamePlan(*ref.plans[k], **plan)) ++tally.wrong;
    }
  });

  EXPECT_EQ(sum.wrong, 0u);
  const InferCache::Stats is = engine->infer_cache_stats();
  EXPECT_EQ(is.hits + is.misses, sum.infers);
  EXPECT_LE(is.inserts, is.misses);
  EXPECT_LE(is.evictions, is.inserts);
  EXPECT_LE(is.size, is.capacity);
  const boxing::PlannerStats ps = engine->plan_cache_stats();
  EXPECT_EQ(ps.hits + ps.misses, sum.plans);
  EXPECT_LE(ps.evictions, ps.misses);
  EXPECT_LE(ps.size, ps.capacity);
  EXPECT_EQ(ps.capacity, 6u);
  std::printf("engine: %llu infers (%llu hits), %llu plans (%llu hits), %llu clears\n",
              static_cast<unsigned long long>(sum.infers),
              static_cast<unsigned long long>(is.hits),
              static_cast<unsigned long long>(sum.plans),
              static_cast<unsigned long long>(ps.hits),
              static_cast<unsigned long long>(sum.clears));
}

// Borrowed results (Engine::InferBorrowed, of requests and of prepared keys)
// are read after other threads had time to evict and clear them: each stays
// valid until its thread's next call (TSan and ASan watch the reads).
TEST(CacheStress, EngineBorrowedResultsSurviveConcurrentEvictionAndClears) {
  const std::vector<InferRequest> infer = InferPool();
  const std::vector<InferKey> keys(infer.begin(), infer.end());
  const Reference ref = SingleThreadReference(infer, {});
  // 1 entry per shard: most misses evict.
  std::unique_ptr<engine::Engine> engine = SmallEngine(/*infer_capacity=*/4, /*plan_capacity=*/1);
  const Tally sum = RunThreads(TotalOps(200000) / kThreads, [&](std::mt19937_64& rng,
                                                                 Tally& tally) {
    const size_t k = Pick(rng, infer.size());
    const uint64_t what = rng() % 200;
    ++tally.infers;
    // Half through prepared keys, whose front-slot hits skip the request.
    const absl::StatusOr<const InferResult*> got =
        what % 2 == 0 ? engine->InferBorrowed(keys[k]) : engine->InferBorrowed(infer[k]);
    if (what < 50) std::this_thread::yield();  // let others evict and clear it
    if (!SameInfer(ref.infer[k], got)) ++tally.wrong;
    if (what == 0) {
      engine->ClearCaches();
      ++tally.clears;
    }
  });
  EXPECT_EQ(sum.wrong, 0u);
  const InferCache::Stats is = engine->infer_cache_stats();
  EXPECT_EQ(is.hits + is.misses, sum.infers);
  EXPECT_GT(is.evictions, 0u);
  EXPECT_LE(is.size, is.capacity);
}

}  // namespace
}  // namespace oneflow_sbp::testing
