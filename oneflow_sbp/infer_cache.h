// InferCache: a bounded, thread-safe cache of inference results, so that the
// eager interpreter's per-op-call inference is a hash lookup.
//
// Example:
//   absl::StatusOr<std::unique_ptr<InferCache>> cache =
//       InferCache::Create(InferCache::Options{.capacity = 4096});
//   auto r = (*cache)->GetOrInfer(request, OneFlowSelectionFor(request.placement));
//   (*cache)->stats().hits;
// Most code uses the Engine (engine.h), which owns one.
//
// Key (SPEC.md §7, "ours"): the op call (its OpDef's identity, arg counts,
// attributes), the placement, per input its logical shape, dtype and
// producer NdSbp, the per-blob constraints, the cost options (policy name,
// partial penalty), whether an explanation was asked for, and the
// fingerprint of the selection policy that answers (so one cache can serve
// policies with different calibrations). Stride is not part of a request,
// as in OneFlow. Every hit compares the full key, never just the hash, so
// two different calls can never share an entry even when their hashes
// collide.
//
// Values are immutable and shared (std::shared_ptr<const InferResult>), or
// borrowed (LookupBorrowed, GetOrInferBorrowed: a plain pointer, no
// reference count). Errors are not cached.
//
// Concurrency and eviction: the key space is split into shards by hash;
// each shard has a reader-writer lock, so concurrent lookups proceed in
// parallel. When a shard is full, a CLOCK sweep evicts one entry not hit
// since the last sweep (a hit only sets a relaxed atomic bit, which keeps
// hits under the shared lock). OneFlow clears the whole cache when it is
// full; this evicts one entry at a time.
//
// Hot path: each thread keeps a small direct-mapped front cache of entries
// it hit recently. A repeated call (the common case in an eager training
// loop) is answered there without any lock: the key hash combines hashes
// precomputed in the OpCall, Placement and InferInputs, and the full-key
// comparison short-cuts on shared objects. Front entries are correct
// values for their keys even after the shared cache evicts them; they only
// delay freeing a few entries per thread. Clear() invalidates them.
//
// Borrowed results: a front slot owns a reference to its entry, and only
// its own thread replaces it, during a later lookup. So a pointer handed
// out from (or through) a front slot stays valid, whatever other threads
// evict or clear, until the same thread's next lookup of any InferCache or
// Engine: the same guarantee as a hazard pointer, with no store, fence or
// atomic read-modify-write on the hit path.
#ifndef ONEFLOW_SBP_INFER_CACHE_H_
#define ONEFLOW_SBP_INFER_CACHE_H_

#include <atomic>
#include <cstdint>
#include <functional>
#include <memory>
#include <vector>

#include "absl/status/statusor.h"
#include "oneflow_sbp/infer_types.h"
#include "oneflow_sbp/selection_policy.h"

namespace oneflow_sbp {

class InferCache {
 public:
  struct Options {
    // Total entries; at least one per shard is kept.
    size_t capacity = 128 * 1024;
    // Power of two.
    int shards = 16;
    // Tests only: maps the key hash before use, e.g. to a constant to force
    // every key into one bucket and prove that full-key comparison holds.
    std::function<size_t(size_t)> hash_override_for_testing;
  };

  struct Stats {
    uint64_t hits = 0;
    uint64_t misses = 0;
    uint64_t inserts = 0;
    uint64_t evictions = 0;
    // Cold inferences (through GetOrInfer) of ops without an SBP rule,
    // which only ever broadcast: a number to watch, never a silent default.
    uint64_t fallback_inferences = 0;
    size_t size = 0;
    size_t capacity = 0;
  };

  // Default options (always valid).
  InferCache();
  // kInvalidArgument for bad options: shards not a power of two in
  // [1, 4096], or capacity 0.
  static absl::StatusOr<std::unique_ptr<InferCache>> Create(Options options);
  ~InferCache();
  InferCache(const InferCache&) = delete;
  InferCache& operator=(const InferCache&) = delete;

  using PolicyPtr = std::shared_ptr<const SelectionPolicy>;

  // The cached result of `request` under `policy`, or nullptr (counted as
  // hit / miss).
  std::shared_ptr<const InferResult> Lookup(const InferRequest& request,
                                            const PolicyPtr& policy) const;
  // Stores `result` and returns the shared value. An equal key already
  // present keeps its value (results are deterministic), which is returned
  // instead. Entries keep their policy alive.
  std::shared_ptr<const InferResult> Insert(const InferRequest& request, const PolicyPtr& policy,
                                            InferResult result);
  // Lookup, else InferSignature and Insert. Errors pass through uncached.
  absl::StatusOr<std::shared_ptr<const InferResult>> GetOrInfer(const InferRequest& request,
                                                                const PolicyPtr& policy);

  // As Lookup and GetOrInfer, but the result is borrowed from this thread's
  // front cache: valid until this thread's next lookup in any InferCache
  // (or Engine), never longer; take GetOrInfer's shared result to keep one.
  const InferResult* LookupBorrowed(const InferRequest& request, const PolicyPtr& policy) const;
  absl::StatusOr<const InferResult*> GetOrInferBorrowed(const InferRequest& request,
                                                        const PolicyPtr& policy);

  Stats stats() const;
  void Clear();

 private:
  struct Entry;
  struct Shard;
  explicit InferCache(Options options);
  size_t HashOf(const InferRequest& request, const SelectionPolicy& policy) const;
  Shard& ShardFor(size_t hash) const;

  // This thread's front slot for `hash` if it holds the key, else nullptr.
  const InferResult* FrontHit(const InferRequest& request, const SelectionPolicy* policy,
                              size_t hash) const;
  // The shard's entry for the key (moved into this thread's front slot for
  // `hash`), or nullptr.
  std::shared_ptr<const InferResult> LookupShared(const InferRequest& request,
                                                 const PolicyPtr& policy, size_t hash) const;
  // Insert with the hash known; the entry holding the key (an equal one
  // already present wins).
  std::shared_ptr<Entry> InsertHashed(const InferRequest& request, const PolicyPtr& policy,
                                      size_t hash, InferResult result);
  // InferSignature for a miss, inserted; errors pass through uncached.
  absl::StatusOr<std::shared_ptr<Entry>> InferAndInsert(const InferRequest& request,
                                                        const PolicyPtr& policy, size_t hash);
  void CountHit() const;
  void CountMiss() const;

  Options options_;
  std::unique_ptr<Shard[]> shards_;
  size_t per_shard_capacity_;
  std::atomic<uint64_t> fallback_inferences_{0};
  // Identifies this cache (and its Clear() generation) in the per-thread
  // front caches, which outlive no cache's identity: ids are never reused.
  const uint64_t id_;
  std::atomic<uint64_t> epoch_{0};
  struct alignas(64) Counter {
    std::atomic<uint64_t> hits{0};
    std::atomic<uint64_t> misses{0};
  };
  // Hit/miss counters striped by thread so hits do not share a cache line.
  static constexpr size_t kStripes = 64;
  mutable Counter counters_[kStripes];
};

// Hash of the request's part of the cache key (before any test override).
size_t InferKeyHash(const InferRequest& request);
// Equality of the request's part of the key: op call, placement, inputs,
// constraints, cost options and explain flag.
bool InferKeyEquals(const InferRequest& a, const InferRequest& b);

}  // namespace oneflow_sbp

#endif  // ONEFLOW_SBP_INFER_CACHE_H_
