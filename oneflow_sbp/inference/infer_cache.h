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
// as in OneFlow. Every hit compares the full key (or, for a prepared
// InferKey, the id of a key whose request was compared in full), never
// just the hash, so two different calls can never share an entry even when
// their hashes collide.
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
// comparison short-cuts on shared objects; a prepared InferKey the slot
// already answered compares its id alone (infer_key.h). Front entries are
// correct values for their keys even after the shared cache evicts them;
// they only delay freeing a few entries per thread. Clear() invalidates
// them.
//
// Borrowed results: a front slot owns a reference to its entry, and only
// its own thread replaces it, during a later lookup. So a pointer handed
// out from (or through) a front slot stays valid, whatever other threads
// evict or clear, until the same thread's next lookup of any InferCache or
// Engine: the same guarantee as a hazard pointer, with no store, fence or
// atomic read-modify-write on the hit path.
#ifndef ONEFLOW_SBP_INFERENCE_INFER_CACHE_H_
#define ONEFLOW_SBP_INFERENCE_INFER_CACHE_H_

#include <atomic>
#include <cstdint>
#include <functional>
#include <memory>
#include <vector>

#include "absl/status/statusor.h"
#include "oneflow_sbp/inference/infer_key.h"
#include "oneflow_sbp/inference/infer_types.h"
#include "oneflow_sbp/inference/selection_policy.h"

namespace oneflow_sbp {

namespace infer_cache_internal {

// One slot of a thread's front cache: what a hit reads. Plain data, so an
// inlined hit reads thread-local storage directly, with no initialisation
// guard or call; the reference that keeps the slot's entry alive sits in
// a parallel array in infer_cache.cc.
struct FrontSlot {
  // The InferKey (infer_key.h) this slot last answered or was filled for, 0
  // for none: a lookup of that key compares this id, not the request.
  uint64_t key_id;
  uint64_t cache_id;  // 0: empty (cache ids start at 1)
  uint64_t epoch;
  size_t hash;
  const InferRequest* key;
  const SelectionPolicy* policy;
  const InferResult* value;
  const std::atomic<bool>* referenced;
};
inline constexpr size_t kFrontSlots = 64;  // a power of two
struct FrontCache {
  FrontSlot slots[kFrontSlots];
  // 1 + the stripe of the hit/miss counters this thread uses; 0 before its
  // first count.
  size_t stripe_plus_one;
};
// Zero-initialised, trivially destructible: constant initialisation.
inline thread_local FrontCache tl_front{};

}  // namespace infer_cache_internal

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

  // The same for a prepared key (infer_key.h): a repeated lookup of one key
  // on one thread compares the key's id, not its request. Same results,
  // entries and counts as the request's lookups.
  const InferResult* LookupBorrowed(const InferKey& key, const PolicyPtr& policy) const {
    if (const InferResult* hit = FrontKeyHit(key, policy.get())) return hit;
    return LookupBorrowedMiss(key, policy);
  }
  absl::StatusOr<const InferResult*> GetOrInferBorrowed(const InferKey& key,
                                                        const PolicyPtr& policy) {
    if (const InferResult* hit = FrontKeyHit(key, policy.get())) return hit;
    return GetOrInferBorrowedMiss(key, policy);
  }
  absl::StatusOr<std::shared_ptr<const InferResult>> GetOrInfer(const InferKey& key,
                                                                const PolicyPtr& policy);
  // The hit the two above answer first, inline: the result if this thread's
  // front slot knows `key` by id under `policy` (counted as a hit), else
  // nullptr (not counted). A null `policy` accepts the slot's: only for a
  // cache whose every lookup picks a request's policy by the request alone,
  // as the Engine's does (by policy name and placement, from an append-only
  // registry), so that a key (one immutable request) meets one policy there.
  const InferResult* FrontKeyHit(const InferKey& key, const SelectionPolicy* policy) const {
    infer_cache_internal::FrontSlot& slot =
        infer_cache_internal::tl_front.slots[key.hash() & (infer_cache_internal::kFrontSlots - 1)];
    if (slot.key_id != key.id() || slot.cache_id != id_ ||
        (policy != nullptr && slot.policy != policy) ||
        slot.epoch != epoch_.load(std::memory_order_acquire)) {
      return nullptr;
    }
    // Keep CLOCK informed; read first so that hot entries shared by many
    // threads are not written on every hit.
    if (!slot.referenced->load(std::memory_order_relaxed)) {
      const_cast<std::atomic<bool>*>(slot.referenced)->store(true, std::memory_order_relaxed);
    }
    CountHit();
    return slot.value;
  }

  Stats stats() const;
  void Clear();

 private:
  struct Entry;
  struct Shard;
  explicit InferCache(Options options);
  // The cache's hash of a request (InferKeyHash) under `policy`.
  size_t HashOf(size_t request_hash, const SelectionPolicy& policy) const;
  Shard& ShardFor(size_t hash) const;

  // This thread's front slot for `hash` if it holds the key, else nullptr.
  // `key_id` is the InferKey's id for `request`, or 0 for a plain request.
  const InferResult* FrontHit(const InferRequest& request, uint64_t key_id,
                              const SelectionPolicy* policy, size_t hash) const;
  // The shard's entry for the key (moved into this thread's front slot for
  // `hash`, which learns `key_id`), or nullptr.
  std::shared_ptr<const InferResult> LookupShared(const InferRequest& request, uint64_t key_id,
                                                 const PolicyPtr& policy, size_t hash) const;
  // The key lookups after FrontKeyHit found nothing.
  const InferResult* LookupBorrowedMiss(const InferKey& key, const PolicyPtr& policy) const;
  absl::StatusOr<const InferResult*> GetOrInferBorrowedMiss(const InferKey& key,
                                                            const PolicyPtr& policy);
  const InferResult* LookupBorrowedHashed(const InferRequest& request, uint64_t key_id,
                                          const PolicyPtr& policy, size_t hash) const;
  absl::StatusOr<const InferResult*> GetOrInferBorrowedHashed(const InferRequest& request,
                                                              uint64_t key_id,
                                                              const PolicyPtr& policy,
                                                              size_t hash);
  // Insert with the hash known; the entry holding the key (an equal one
  // already present wins).
  std::shared_ptr<Entry> InsertHashed(const InferRequest& request, const PolicyPtr& policy,
                                      size_t hash, InferResult result);
  // InferSignature for a miss, inserted; errors pass through uncached.
  absl::StatusOr<std::shared_ptr<Entry>> InferAndInsert(const InferRequest& request,
                                                        const PolicyPtr& policy, size_t hash);
  struct alignas(64) Counter {
    std::atomic<uint64_t> hits{0};
    std::atomic<uint64_t> misses{0};
  };
  // The first kStripes - 1 threads own a stripe each and count with a plain
  // load and store (no locked instruction on the hit path); later threads
  // share the last stripe through atomic adds.
  void Count(std::atomic<uint64_t> Counter::*which) const {
    size_t stripe_plus_one = infer_cache_internal::tl_front.stripe_plus_one;
    if (stripe_plus_one == 0) stripe_plus_one = AssignStripe();
    const size_t stripe = stripe_plus_one - 1;
    if (stripe < kStripes - 1) {
      std::atomic<uint64_t>& c = counters_[stripe].*which;
      c.store(c.load(std::memory_order_relaxed) + 1, std::memory_order_relaxed);
    } else {
      (counters_[kStripes - 1].*which).fetch_add(1, std::memory_order_relaxed);
    }
  }
  void CountHit() const { Count(&Counter::hits); }
  void CountMiss() const;
  // Gives this thread its counter stripe; returns 1 + the stripe.
  static size_t AssignStripe();

  Options options_;
  std::unique_ptr<Shard[]> shards_;
  size_t per_shard_capacity_;
  std::atomic<uint64_t> fallback_inferences_{0};
  // Identifies this cache (and its Clear() generation) in the per-thread
  // front caches, which outlive no cache's identity: ids are never reused.
  const uint64_t id_;
  std::atomic<uint64_t> epoch_{0};
  // Hit/miss counters striped by thread so hits do not share a cache line.
  static constexpr size_t kStripes = 64;
  mutable Counter counters_[kStripes];
};

}  // namespace oneflow_sbp

#endif  // ONEFLOW_SBP_INFERENCE_INFER_CACHE_H_
