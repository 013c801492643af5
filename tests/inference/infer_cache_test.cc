// InferCache: hits, misses, eviction, full-key comparison under forced hash
// collisions, and concurrent use.
#include "oneflow_sbp/inference/infer_cache.h"

#include <string>
#include <thread>
#include <vector>

#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "oneflow_sbp/inference/infer_key.h"
#include "oneflow_sbp/inference/oneflow_selection.h"
#include "oneflow_sbp/inference/signature_inference.h"
#include "tests/support/infer_test_util.h"

namespace oneflow_sbp::testing {
namespace {

InferRequest Request(const std::string& op, const std::string& placement,
                     const std::vector<std::string>& inputs,
                     const std::vector<std::string>& attrs = {}) {
  absl::StatusOr<std::shared_ptr<const OpCall>> call =
      MakeCall(op, static_cast<int>(inputs.size()), attrs);
  EXPECT_TRUE(call.ok()) << call.status();
  InferRequest r;
  r.op = *call;
  r.placement = *Placement::Parse(placement);
  for (const std::string& in : inputs) {
    const size_t colon = in.find(':');
    r.inputs.push_back(InferInput{*TensorDesc::Parse(in.substr(0, colon)),
                                  *NdSbp::Parse(in.substr(colon + 1))});
  }
  return r;
}

// The `oneflow` policy for the request's placement.
std::shared_ptr<const SelectionPolicy> Policy(const InferRequest& r) {
  return OneFlowSelectionFor(r.placement);
}

// A cache of one entry in one shard: every insert evicts.
std::unique_ptr<InferCache> OneEntryCache() {
  InferCache::Options options;
  options.capacity = 1;
  options.shards = 1;
  return *InferCache::Create(options);
}

// Many requests that differ in exactly one key component each.
std::vector<InferRequest> DistinctRequests() {
  std::vector<InferRequest> out;
  const std::vector<std::string> sbps = {"(S(0),B)", "(B,S(0))", "(S(1),S(0))", "(P,B)",
                                         "(B,B)", "(S(0),S(1))"};
  for (const std::string& a : sbps) {
    for (const std::string& b : sbps) {
      out.push_back(Request("matmul", "cpu:0-3 [2,2]",
                            {"f32[64,32]:" + a, "f32[32,48]:" + b}));
    }
  }
  out.push_back(Request("matmul", "cpu:0-3 [2,2]", {"f32[64,32]:(S(0),B)", "f32[48,32]:(B,S(0))"},
                        {"transpose_b=true"}));
  out.push_back(Request("matmul", "cpu:0-3 [2,2]", {"f16[64,32]:(S(0),B)", "f16[32,48]:(B,B)"}));
  out.push_back(Request("matmul", "cpu:0-3 [4,1]", {"f32[64,32]:(S(0),B)", "f32[32,48]:(B,B)"}));
  out.push_back(Request("matmul", "cpu:4-7 [2,2]", {"f32[64,32]:(S(0),B)", "f32[32,48]:(B,B)"}));
  out.push_back(Request("matmul", "cpu:0-3 [2,2]", {"f32[64,16]:(S(0),B)", "f32[16,48]:(B,B)"}));
  InferRequest explained = out.front();
  explained.explain = true;
  out.push_back(explained);
  InferRequest constrained = out.front();
  constrained.constraints.resize(3);
  constrained.constraints[0] = *NdSbp::Parse("(B,B)");
  out.push_back(constrained);
  InferRequest penalty = out.front();
  penalty.cost.partial_penalty = PartialPenalty::kConstant;
  out.push_back(penalty);
  return out;
}

TEST(InferCache, HitAfterMissSharesTheValue) {
  InferCache cache;
  const InferRequest r = Request("relu", "cpu:0-3 [2,2]", {"f32[8,8]:(P,P)"});
  absl::StatusOr<std::shared_ptr<const InferResult>> a = cache.GetOrInfer(r, Policy(r));
  absl::StatusOr<std::shared_ptr<const InferResult>> b = cache.GetOrInfer(r, Policy(r));
  ASSERT_TRUE(a.ok() && b.ok());
  EXPECT_EQ(a->get(), b->get());
  const InferCache::Stats s = cache.stats();
  EXPECT_EQ(s.misses, 1u);
  EXPECT_EQ(s.hits, 1u);
  EXPECT_EQ(s.inserts, 1u);
  EXPECT_EQ(s.size, 1u);
  // An equal request built separately (other OpCall object) hits too.
  const InferRequest again = Request("relu", "cpu:0-3 [2,2]", {"f32[8,8]:(P,P)"});
  EXPECT_EQ(cache.Lookup(again, Policy(again)).get(), a->get());
}

TEST(InferCache, EveryKeyComponentSeparatesEntries) {
  const std::vector<InferRequest> requests = DistinctRequests();
  for (size_t i = 0; i < requests.size(); ++i) {
    for (size_t j = 0; j < requests.size(); ++j) {
      EXPECT_EQ(InferKeyEquals(requests[i], requests[j]), i == j) << i << " vs " << j;
    }
  }
}

// Every key hashes to the same value: only full-key comparison can keep the
// entries apart. Each cached answer must equal a fresh inference.
TEST(InferCache, ForcedHashCollisionsNeverMixUpCalls) {
  InferCache::Options options;
  options.hash_override_for_testing = [](size_t) { return size_t{42}; };
  std::unique_ptr<InferCache> owned = *InferCache::Create(options);
  InferCache& cache = *owned;
  const std::vector<InferRequest> requests = DistinctRequests();
  for (int round = 0; round < 2; ++round) {
    for (const InferRequest& r : requests) {
      absl::StatusOr<std::shared_ptr<const InferResult>> cached = cache.GetOrInfer(r, Policy(r));
      absl::StatusOr<InferResult> fresh = InferSignature(r);
      ASSERT_TRUE(cached.ok() && fresh.ok());
      EXPECT_EQ(SignatureToString(*r.op, (*cached)->signature),
                SignatureToString(*r.op, fresh->signature));
      EXPECT_EQ((*cached)->candidates.size(), fresh->candidates.size());
    }
  }
  EXPECT_EQ(cache.stats().size, requests.size());
  EXPECT_EQ(cache.stats().hits, requests.size());
}

TEST(InferCache, ClockEvictsEntriesNotHitSinceTheLastSweep) {
  InferCache::Options options;
  options.capacity = 4;
  options.shards = 1;
  std::unique_ptr<InferCache> owned = *InferCache::Create(options);
  InferCache& cache = *owned;
  const std::vector<InferRequest> r = DistinctRequests();
  for (int i = 0; i < 4; ++i) ASSERT_TRUE(cache.GetOrInfer(r[i], Policy(r[i])).ok());
  ASSERT_NE(cache.Lookup(r[0], Policy(r[0])), nullptr);  // r[0] referenced
  ASSERT_TRUE(cache.GetOrInfer(r[4], Policy(r[4])).ok());  // evicts r[1], the first unreferenced
  EXPECT_NE(cache.Lookup(r[0], Policy(r[0])), nullptr);
  EXPECT_EQ(cache.Lookup(r[1], Policy(r[1])), nullptr);
  EXPECT_NE(cache.Lookup(r[4], Policy(r[4])), nullptr);
  InferCache::Stats s = cache.stats();
  EXPECT_EQ(s.size, 4u);
  EXPECT_EQ(s.evictions, 1u);
  for (size_t i = 5; i < r.size(); ++i) ASSERT_TRUE(cache.GetOrInfer(r[i], Policy(r[i])).ok());
  s = cache.stats();
  EXPECT_EQ(s.size, 4u);
  EXPECT_EQ(s.evictions, r.size() - 4);
  cache.Clear();
  EXPECT_EQ(cache.stats().size, 0u);
}

TEST(InferCache, ErrorsAreNotCached) {
  InferCache cache;
  const InferRequest bad = Request("relu", "cpu:0-1", {"f32[8,8]:S(0)"});
  InferRequest wrong = bad;
  wrong.constraints = {std::nullopt, *NdSbp::Parse("P")};
  EXPECT_FALSE(cache.GetOrInfer(wrong, Policy(wrong)).ok());
  EXPECT_FALSE(cache.GetOrInfer(wrong, Policy(wrong)).ok());
  EXPECT_EQ(cache.stats().inserts, 0u);
  EXPECT_EQ(cache.stats().misses, 2u);
}

TEST(InferCache, BorrowedResultsAreTheSharedValues) {
  InferCache cache;
  const InferRequest r = DistinctRequests().front();
  absl::StatusOr<const InferResult*> cold = cache.GetOrInferBorrowed(r, Policy(r));
  ASSERT_TRUE(cold.ok()) << cold.status();
  absl::StatusOr<const InferResult*> warm = cache.GetOrInferBorrowed(r, Policy(r));
  ASSERT_TRUE(warm.ok()) << warm.status();
  EXPECT_EQ(*warm, *cold);
  EXPECT_EQ(cache.LookupBorrowed(r, Policy(r)), *cold);
  EXPECT_EQ(cache.Lookup(r, Policy(r)).get(), *cold);
  EXPECT_EQ(SignatureToString(*r.op, (*cold)->signature),
            SignatureToString(*r.op, InferSignature(r)->signature));
  const InferCache::Stats s = cache.stats();
  EXPECT_EQ(s.misses, 1u);
  EXPECT_EQ(s.hits, 3u);
  InferRequest wrong = r;
  wrong.inputs.pop_back();
  EXPECT_FALSE(cache.GetOrInferBorrowed(wrong, Policy(wrong)).ok());
  EXPECT_EQ(cache.LookupBorrowed(wrong, Policy(wrong)), nullptr);
}

// A borrowed result outlives its entry's eviction and a Clear() by other
// threads until the borrowing thread looks up again (under ASan a freed
// value would be reported here).
TEST(InferCache, BorrowedResultSurvivesEvictionAndClearByOtherThreads) {
  std::unique_ptr<InferCache> cache = OneEntryCache();
  const std::vector<InferRequest> requests = DistinctRequests();
  const InferRequest& r = requests.front();
  const std::string want = SignatureToString(*r.op, InferSignature(r)->signature);
  absl::StatusOr<const InferResult*> borrowed = cache->GetOrInferBorrowed(r, Policy(r));
  ASSERT_TRUE(borrowed.ok()) << borrowed.status();
  std::thread evictor([&] {
    for (size_t i = 1; i < requests.size(); ++i) {
      ASSERT_TRUE(cache->GetOrInfer(requests[i], Policy(requests[i])).ok());
    }
    cache->Clear();
  });
  evictor.join();
  EXPECT_EQ(cache->stats().size, 0u);  // evicted, then cleared
  EXPECT_EQ(SignatureToString(*r.op, (*borrowed)->signature), want);
  EXPECT_EQ((*borrowed)->output_descs.size(), 1u);
}

// Prepared keys (infer_key.h): the same entries, values and counts as the
// requests they hold.
TEST(InferCacheKeys, KeysShareEntriesWithTheirRequests) {
  InferCache cache;
  const InferRequest r = DistinctRequests().front();
  const InferKey key(r);
  const InferKey twin(r);  // an equal request in another key
  ASSERT_NE(key.id(), twin.id());
  EXPECT_EQ(key.hash(), InferKeyHash(r));
  EXPECT_EQ(cache.LookupBorrowed(key, Policy(r)), nullptr);
  absl::StatusOr<const InferResult*> cold = cache.GetOrInferBorrowed(key, Policy(r));
  ASSERT_TRUE(cold.ok()) << cold.status();
  absl::StatusOr<const InferResult*> warm = cache.GetOrInferBorrowed(key, Policy(r));
  ASSERT_TRUE(warm.ok()) << warm.status();
  EXPECT_EQ(*warm, *cold);
  EXPECT_EQ(cache.LookupBorrowed(key, Policy(r)), *cold);
  EXPECT_EQ(cache.LookupBorrowed(twin, Policy(r)), *cold);
  EXPECT_EQ(cache.LookupBorrowed(r, Policy(r)), *cold);
  absl::StatusOr<std::shared_ptr<const InferResult>> shared = cache.GetOrInfer(key, Policy(r));
  ASSERT_TRUE(shared.ok()) << shared.status();
  EXPECT_EQ(shared->get(), *cold);
  EXPECT_EQ(SignatureToString(*r.op, (*cold)->signature),
            SignatureToString(*r.op, InferSignature(r)->signature));
  InferCache::Stats s = cache.stats();
  EXPECT_EQ(s.misses, 2u);  // the first LookupBorrowed and the cold inference
  EXPECT_EQ(s.hits, 5u);
  EXPECT_EQ(s.size, 1u);
  // A key made from a request the cache already holds hits at once.
  const InferRequest other = DistinctRequests()[1];
  ASSERT_TRUE(cache.GetOrInfer(other, Policy(other)).ok());
  EXPECT_NE(cache.LookupBorrowed(InferKey(other), Policy(other)), nullptr);
  // Errors pass through uncached, as for requests.
  InferRequest wrong = r;
  wrong.inputs.pop_back();
  const InferKey bad(wrong);
  EXPECT_FALSE(cache.GetOrInferBorrowed(bad, Policy(wrong)).ok());
  EXPECT_FALSE(cache.GetOrInfer(bad, Policy(wrong)).ok());
  s = cache.stats();
  EXPECT_EQ(s.inserts, 2u);
}

// Every key's answer is its own request's, whichever keys and requests took
// the front slots before it: many keys share the 64 slots, so slots are
// taken over by other keys and by plain requests between the key's lookups.
// With a hash override slots move away from the keys' own hash bits: only
// keys whose bits name the override's slot take the id path there.
TEST(InferCacheKeys, KeysNeverTakeAnotherCallsAnswer) {
  const std::vector<InferRequest> requests = DistinctRequests();
  std::vector<InferKey> keys;
  std::vector<std::string> want;
  for (const InferRequest& r : requests) {
    keys.emplace_back(r);
    want.push_back(SignatureToString(*r.op, InferSignature(r)->signature));
  }
  InferCache::Options collide;
  collide.hash_override_for_testing = [](size_t) { return size_t{42}; };
  std::vector<std::unique_ptr<InferCache>> caches;
  caches.push_back(*InferCache::Create(InferCache::Options()));
  caches.push_back(*InferCache::Create(collide));
  for (const std::unique_ptr<InferCache>& cache : caches) {
    for (int round = 0; round < 3; ++round) {
      for (size_t i = 0; i < requests.size(); ++i) {
        // Keys in a stride that visits each once per round, plain requests
        // in between.
        const size_t k = (i * 7 + round) % requests.size();
        absl::StatusOr<const InferResult*> got =
            cache->GetOrInferBorrowed(keys[k], Policy(requests[k]));
        ASSERT_TRUE(got.ok()) << got.status();
        EXPECT_EQ(SignatureToString(*requests[k].op, (*got)->signature), want[k]) << k;
        const size_t j = (k * 5 + 3) % requests.size();
        absl::StatusOr<const InferResult*> plain =
            cache->GetOrInferBorrowed(requests[j], Policy(requests[j]));
        ASSERT_TRUE(plain.ok()) << plain.status();
        EXPECT_EQ(SignatureToString(*requests[j].op, (*plain)->signature), want[j]) << j;
      }
    }
    EXPECT_EQ(cache->stats().size, requests.size());
  }
  // Two keys whose front slots coincide, used in turn: each must read its
  // own answer although the other just took the slot.
  size_t a = 0, b = 0;
  for (size_t i = 0; i < keys.size() && b == 0; ++i) {
    for (size_t j = i + 1; j < keys.size(); ++j) {
      if (keys[i].hash() % 64 == keys[j].hash() % 64) {
        a = i;
        b = j;
        break;
      }
    }
  }
  ASSERT_NE(b, 0u) << "no two of " << keys.size() << " keys share a front slot";
  InferCache cache;
  for (int round = 0; round < 4; ++round) {
    for (size_t k : {a, b}) {
      absl::StatusOr<const InferResult*> got =
          cache.GetOrInferBorrowed(keys[k], Policy(requests[k]));
      ASSERT_TRUE(got.ok()) << got.status();
      EXPECT_EQ(SignatureToString(*requests[k].op, (*got)->signature), want[k]);
    }
  }
}

// OneFlow's N-D rules choosing the last survivor instead: a policy whose
// answers differ from Policy(r)'s.
class LastSurvivor : public SelectionPolicy {
 public:
  LastSurvivor() : SelectionPolicy("test/last-survivor") {}
  const StageRules& rules() const override { return OneFlowNd()->rules(); }
  absl::Status EmptyAfterFiltering(const SelectionInput& in) const override {
    return OneFlowNd()->EmptyAfterFiltering(in);
  }
  absl::StatusOr<int> Choose(const SelectionInput& in, ExplainRecorder&) const override {
    return static_cast<int>(in.survivors.size()) - 1;
  }
};

// A slot that knows a key in one cache answers nothing in another, nor
// after Clear(), nor under another policy.
TEST(InferCacheKeys, SlotsAreBoundToCacheEpochAndPolicy) {
  const InferRequest r = DistinctRequests().front();
  const InferKey key(r);
  InferCache first;
  InferCache second;
  ASSERT_TRUE(first.GetOrInferBorrowed(key, Policy(r)).ok());
  EXPECT_EQ(second.LookupBorrowed(key, Policy(r)), nullptr);
  EXPECT_NE(first.LookupBorrowed(key, Policy(r)), nullptr);
  first.Clear();
  EXPECT_EQ(first.FrontKeyHit(key, Policy(r).get()), nullptr);
  EXPECT_EQ(first.LookupBorrowed(key, Policy(r)), nullptr);
  // Another policy: its own entry and answer, however the key alternates.
  const std::shared_ptr<const SelectionPolicy> last = std::make_shared<LastSurvivor>();
  const std::string want_oneflow = SignatureToString(*r.op, InferSignature(r)->signature);
  const std::string want_last = SignatureToString(*r.op, InferSignature(r, *last)->signature);
  ASSERT_NE(want_oneflow, want_last);
  ASSERT_TRUE(first.GetOrInferBorrowed(key, Policy(r)).ok());
  EXPECT_EQ(first.FrontKeyHit(key, last.get()), nullptr);
  EXPECT_EQ(first.LookupBorrowed(key, last), nullptr);
  for (int round = 0; round < 3; ++round) {
    absl::StatusOr<const InferResult*> a = first.GetOrInferBorrowed(key, last);
    ASSERT_TRUE(a.ok()) << a.status();
    EXPECT_EQ(SignatureToString(*r.op, (*a)->signature), want_last);
    absl::StatusOr<const InferResult*> b = first.GetOrInferBorrowed(key, Policy(r));
    ASSERT_TRUE(b.ok()) << b.status();
    EXPECT_EQ(SignatureToString(*r.op, (*b)->signature), want_oneflow);
  }
  EXPECT_EQ(first.stats().size, 2u);
}

// What a thread-exit destructor sees (LateLookup below).
InferCache* late_cache = nullptr;
const InferRequest* late_request = nullptr;
const InferKey* late_key = nullptr;
std::string* late_result = nullptr;

// Looks the key up from its destructor, which runs after the cache's
// per-thread owners are gone when it was constructed before them.
struct LateLookup {
  ~LateLookup() {
    const InferRequest& r = *late_request;
    absl::StatusOr<const InferResult*> borrowed =
        late_cache->GetOrInferBorrowed(*late_key, Policy(r));
    absl::StatusOr<std::shared_ptr<const InferResult>> shared =
        late_cache->GetOrInfer(*late_key, Policy(r));
    *late_result = borrowed.ok() && shared.ok()
                       ? SignatureToString(*r.op, (*borrowed)->signature) + " | " +
                             SignatureToString(*r.op, (*shared)->signature)
                       : "error";
  }
};

// A key's slot outlives its thread's owning references only until they go:
// a lookup from a later thread-exit destructor misses and is answered
// afresh, never from the entry the owners freed (evicted from the shard
// meanwhile; ASan watches), and what it returns stays valid.
TEST(InferCacheKeys, LookupsFromLateThreadExitDestructorsAreAnsweredAfresh) {
  std::unique_ptr<InferCache> cache = OneEntryCache();
  const std::vector<InferRequest> requests = DistinctRequests();
  const InferKey key(requests[0]);
  const std::string want =
      SignatureToString(*requests[0].op, InferSignature(requests[0])->signature);
  std::string result;
  late_cache = cache.get();
  late_request = &requests[0];
  late_key = &key;
  late_result = &result;
  std::thread t([&] {
    thread_local LateLookup late;  // constructed first, so destroyed last
    (void)&late;
    ASSERT_TRUE(cache->GetOrInferBorrowed(key, Policy(requests[0])).ok());
    // Evicts the key's entry from the one-entry shard: only the slot's
    // owner holds it now.
    ASSERT_TRUE(cache->GetOrInfer(requests[1], Policy(requests[1])).ok());
  });
  t.join();
  EXPECT_EQ(result, want + " | " + want);
}

TEST(InferCache, ConcurrentReadersAndWritersAgree) {
  InferCache::Options options;
  options.capacity = 32;  // smaller than the working set: evictions race too
  options.shards = 4;
  std::unique_ptr<InferCache> owned = *InferCache::Create(options);
  InferCache& cache = *owned;
  const std::vector<InferRequest> requests = DistinctRequests();
  std::vector<std::string> expected;
  for (const InferRequest& r : requests) {
    expected.push_back(SignatureToString(*r.op, InferSignature(r)->signature));
  }
  constexpr int kThreads = 8;
  constexpr int kRounds = 30;
  std::vector<int> wrong(kThreads, 0);
  std::vector<std::thread> threads;
  for (int t = 0; t < kThreads; ++t) {
    threads.emplace_back([&, t] {
      for (int round = 0; round < kRounds; ++round) {
        for (size_t i = 0; i < requests.size(); ++i) {
          const size_t k = (i * 7 + t + round) % requests.size();
          absl::StatusOr<std::shared_ptr<const InferResult>> r = cache.GetOrInfer(requests[k], Policy(requests[k]));
          if (!r.ok() || SignatureToString(*requests[k].op, (*r)->signature) != expected[k]) {
            ++wrong[t];
          }
        }
      }
    });
  }
  for (std::thread& t : threads) t.join();
  for (int t = 0; t < kThreads; ++t) EXPECT_EQ(wrong[t], 0) << "thread " << t;
  const InferCache::Stats s = cache.stats();
  EXPECT_EQ(s.hits + s.misses, uint64_t{kThreads} * kRounds * requests.size());
  EXPECT_LE(s.size, 32u);
}

}  // namespace
}  // namespace oneflow_sbp::testing
