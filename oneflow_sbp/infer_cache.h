// InferCache: a bounded, thread-safe cache of inference results, so that the
// eager interpreter's per-op-call inference is a hash lookup.
//
// Example:
//   InferCache cache(InferCache::Options{.capacity = 4096});
//   absl::StatusOr<std::shared_ptr<const InferResult>> r = cache.GetOrInfer(request);
//   cache.stats().hits;
//
// Key (SPEC.md §7, "ours"): the op call (type, arg counts, attributes),
// the placement, per input its logical shape, dtype and producer NdSbp,
// the per-blob constraints, the cost options, and whether an explanation
// was asked for. Stride is not part of a request, as in OneFlow. Every hit
// compares the full key, never just the hash, so two different calls can
// never share an entry even when their hashes collide.
//
// Values are immutable and shared (std::shared_ptr<const InferResult>).
// Errors are not cached.
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
#ifndef ONEFLOW_SBP_INFER_CACHE_H_
#define ONEFLOW_SBP_INFER_CACHE_H_

#include <atomic>
#include <cstdint>
#include <functional>
#include <memory>
#include <vector>

#include "absl/status/statusor.h"
#include "oneflow_sbp/infer_types.h"

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

  InferCache();
  explicit InferCache(Options options);
  ~InferCache();
  InferCache(const InferCache&) = delete;
  InferCache& operator=(const InferCache&) = delete;

  // The cached result for `request`, or nullptr (counted as hit / miss).
  std::shared_ptr<const InferResult> Lookup(const InferRequest& request) const;
  // Stores `result` for `request` and returns the shared value. An equal
  // key already present keeps its value (results are deterministic), which
  // is returned instead.
  std::shared_ptr<const InferResult> Insert(const InferRequest& request, InferResult result);
  // Lookup, else InferSignature and Insert. Errors pass through uncached.
  absl::StatusOr<std::shared_ptr<const InferResult>> GetOrInfer(const InferRequest& request);

  Stats stats() const;
  void Clear();

 private:
  struct Entry;
  struct Shard;
  size_t HashOf(const InferRequest& request) const;
  Shard& ShardFor(size_t hash) const;

  std::shared_ptr<const InferResult> LookupShared(const InferRequest& request,
                                                 size_t hash) const;
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

// Hash of the cache key of `request` (before any test override).
size_t InferKeyHash(const InferRequest& request);
// Full key equality: op call, placement, inputs, constraints, cost
// options and explain flag.
bool InferKeyEquals(const InferRequest& a, const InferRequest& b);

}  // namespace oneflow_sbp

#endif  // ONEFLOW_SBP_INFER_CACHE_H_
