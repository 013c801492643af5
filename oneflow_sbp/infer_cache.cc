#include "oneflow_sbp/infer_cache.h"

#include <utility>

#include "absl/container/flat_hash_map.h"
#include "absl/hash/hash.h"
#include "absl/synchronization/mutex.h"
#include "oneflow_sbp/check.h"
#include "oneflow_sbp/signature_inference.h"

namespace oneflow_sbp {

size_t InferKeyHash(const InferRequest& r) {
  size_t h = absl::HashOf(r.op == nullptr ? size_t{0} : r.op->hash(), r.placement,
                          r.cost, r.explain, r.inputs.size(), r.constraints.size());
  for (const InferInput& in : r.inputs) h = absl::HashOf(h, in);
  for (const std::optional<NdSbp>& c : r.constraints) {
    h = c ? absl::HashOf(h, true, *c) : absl::HashOf(h, false);
  }
  return h;
}

bool InferKeyEquals(const InferRequest& a, const InferRequest& b) {
  if (a.op != b.op && (a.op == nullptr || b.op == nullptr || !(*a.op == *b.op))) {
    return false;
  }
  return a.placement == b.placement && a.cost == b.cost && a.explain == b.explain &&
         a.inputs == b.inputs && a.constraints == b.constraints;
}

struct InferCache::Entry {
  // The key is a request whose op, placement, inputs and constraints are
  // owned copies.
  InferRequest key;
  std::shared_ptr<const InferResult> value;
  mutable std::atomic<bool> referenced{true};
  size_t clock_slot = 0;
};

namespace {

// Heterogeneous lookup: entries are keyed by their precomputed hash plus
// the full request, and looked up with a request the caller owns.
struct KeyRef {
  size_t hash;
  const InferRequest* request;
};

struct KeyRefHash {
  using is_transparent = void;
  size_t operator()(const KeyRef& k) const { return k.hash; }
};

struct KeyRefEq {
  using is_transparent = void;
  bool operator()(const KeyRef& a, const KeyRef& b) const {
    return a.hash == b.hash && InferKeyEquals(*a.request, *b.request);
  }
};

}  // namespace

struct InferCache::Shard {
  mutable absl::Mutex mu;
  absl::flat_hash_map<KeyRef, std::unique_ptr<Entry>, KeyRefHash, KeyRefEq> map
      ABSL_GUARDED_BY(mu);
  // CLOCK ring of live entries; `hand` is the next slot the sweep looks at.
  std::vector<Entry*> ring ABSL_GUARDED_BY(mu);
  size_t hand ABSL_GUARDED_BY(mu) = 0;
  mutable std::atomic<uint64_t> hits{0};
  mutable std::atomic<uint64_t> misses{0};
  std::atomic<uint64_t> inserts{0};
  std::atomic<uint64_t> evictions{0};
};

InferCache::InferCache() : InferCache(Options()) {}

InferCache::InferCache(Options options) : options_(std::move(options)) {
  OFS_CHECK(options_.shards >= 1 && (options_.shards & (options_.shards - 1)) == 0)
      << "shards must be a power of two, got " << options_.shards;
  shards_ = std::make_unique<Shard[]>(options_.shards);
  per_shard_capacity_ = std::max<size_t>(1, options_.capacity / options_.shards);
}

InferCache::~InferCache() = default;

size_t InferCache::HashOf(const InferRequest& request) const {
  const size_t h = InferKeyHash(request);
  return options_.hash_override_for_testing ? options_.hash_override_for_testing(h) : h;
}

InferCache::Shard& InferCache::ShardFor(size_t hash) const {
  // High bits pick the shard; the map uses the whole hash.
  return shards_[(hash >> 48) & static_cast<size_t>(options_.shards - 1)];
}

std::shared_ptr<const InferResult> InferCache::Lookup(const InferRequest& request) const {
  const size_t hash = HashOf(request);
  Shard& shard = ShardFor(hash);
  {
    absl::ReaderMutexLock lock(&shard.mu);
    auto it = shard.map.find(KeyRef{hash, &request});
    if (it != shard.map.end()) {
      it->second->referenced.store(true, std::memory_order_relaxed);
      shard.hits.fetch_add(1, std::memory_order_relaxed);
      return it->second->value;
    }
  }
  shard.misses.fetch_add(1, std::memory_order_relaxed);
  return nullptr;
}

void InferCache::Insert(const InferRequest& request,
                        std::shared_ptr<const InferResult> result) {
  const size_t hash = HashOf(request);
  Shard& shard = ShardFor(hash);
  auto entry = std::make_unique<Entry>();
  entry->key = request;
  entry->value = std::move(result);
  absl::MutexLock lock(&shard.mu);
  auto it = shard.map.find(KeyRef{hash, &request});
  if (it != shard.map.end()) {
    it->second->value = entry->value;
    return;
  }
  if (shard.ring.size() >= per_shard_capacity_) {
    // CLOCK: clear reference bits until an unreferenced entry comes up.
    while (true) {
      Entry* victim = shard.ring[shard.hand];
      if (victim->referenced.exchange(false, std::memory_order_relaxed)) {
        shard.hand = (shard.hand + 1) % shard.ring.size();
        continue;
      }
      const size_t slot = shard.hand;
      shard.map.erase(KeyRef{HashOf(victim->key), &victim->key});
      entry->clock_slot = slot;
      shard.ring[slot] = entry.get();
      shard.hand = (slot + 1) % shard.ring.size();
      shard.evictions.fetch_add(1, std::memory_order_relaxed);
      break;
    }
  } else {
    entry->clock_slot = shard.ring.size();
    shard.ring.push_back(entry.get());
  }
  Entry* raw = entry.get();
  shard.map.emplace(KeyRef{hash, &raw->key}, std::move(entry));
  shard.inserts.fetch_add(1, std::memory_order_relaxed);
}

absl::StatusOr<std::shared_ptr<const InferResult>> InferCache::GetOrInfer(
    const InferRequest& request) {
  std::shared_ptr<const InferResult> hit = Lookup(request);
  if (hit != nullptr) return hit;
  absl::StatusOr<InferResult> result = InferSignature(request);
  if (!result.ok()) return result.status();
  auto value = std::make_shared<const InferResult>(*std::move(result));
  Insert(request, value);
  return value;
}

InferCache::Stats InferCache::stats() const {
  Stats s;
  s.capacity = per_shard_capacity_ * options_.shards;
  for (int i = 0; i < options_.shards; ++i) {
    const Shard& shard = shards_[i];
    s.hits += shard.hits.load(std::memory_order_relaxed);
    s.misses += shard.misses.load(std::memory_order_relaxed);
    s.inserts += shard.inserts.load(std::memory_order_relaxed);
    s.evictions += shard.evictions.load(std::memory_order_relaxed);
    absl::ReaderMutexLock lock(&shard.mu);
    s.size += shard.map.size();
  }
  return s;
}

void InferCache::Clear() {
  for (int i = 0; i < options_.shards; ++i) {
    Shard& shard = shards_[i];
    absl::MutexLock lock(&shard.mu);
    shard.map.clear();
    shard.ring.clear();
    shard.hand = 0;
  }
}

}  // namespace oneflow_sbp
