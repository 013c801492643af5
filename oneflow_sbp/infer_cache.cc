#include "oneflow_sbp/infer_cache.h"

#include <utility>

#include "absl/container/flat_hash_map.h"
#include "absl/hash/hash.h"
#include "absl/strings/str_cat.h"
#include "absl/synchronization/mutex.h"
#include "oneflow_sbp/check.h"
#include "oneflow_sbp/signature_inference.h"

namespace oneflow_sbp {

// Combines precomputed hashes only (op call, placement, each input), so the
// cost stays a few multiplications however large the shapes are.
size_t InferKeyHash(const InferRequest& r) {
  uint64_t h = (r.op == nullptr ? 0 : r.op->hash()) ^ r.placement.hash();
  auto mix = [&h](uint64_t v) {
    h = (h ^ v) * 0x9E3779B97F4A7C15ull;
    h ^= h >> 29;
  };
  mix((uint64_t{r.cost.policy.id()} << 16) ^
      (static_cast<uint64_t>(r.cost.partial_penalty) << 8) ^ (r.explain ? 1 : 0));
  for (const InferInput& in : r.inputs) mix(in.hash());
  for (const std::optional<NdSbp>& c : r.constraints) {
    mix(c ? c->packed() ^ (uint64_t{static_cast<uint8_t>(c->size())} << 56) : 0x5bd1e995ull);
  }
  return static_cast<size_t>(h);
}

bool InferKeyEquals(const InferRequest& a, const InferRequest& b) {
  // Cheapest and most selective first: callers share OpCall and Placement
  // objects, so those usually compare as pointers; inputs compare their
  // precomputed hashes before their contents.
  if (a.op != b.op && (a.op == nullptr || b.op == nullptr || !(*a.op == *b.op))) {
    return false;
  }
  if (a.inputs.size() != b.inputs.size() || a.cost != b.cost || a.explain != b.explain ||
      !(a.placement == b.placement)) {
    return false;
  }
  for (size_t i = 0; i < a.inputs.size(); ++i) {
    if (a.inputs[i] != b.inputs[i]) return false;
  }
  return a.constraints == b.constraints;
}

struct InferCache::Entry {
  // The key is a request whose op, placement, inputs and constraints are
  // owned copies. Results handed out alias the entry, so an entry lives as
  // long as anyone holds its result (or a thread's front cache holds it).
  InferRequest key;
  std::shared_ptr<const SelectionPolicy> policy;
  size_t hash = 0;
  InferResult value;
  // New entries start unreferenced, so a sweep evicts them before entries
  // that were hit since they arrived.
  mutable std::atomic<bool> referenced{false};
};

namespace {

// Heterogeneous lookup: entries are keyed by their hash plus the full
// request, and looked up with a request the caller owns.
struct KeyRef {
  size_t hash;
  const InferRequest* request;
  const SelectionPolicy* policy;
};

// Entries hold their policy, so a policy at the same address is the same
// object; otherwise equal fingerprints mean equal choices.
bool SamePolicy(const SelectionPolicy* a, const SelectionPolicy* b) {
  return a == b || a->fingerprint() == b->fingerprint();
}

struct KeyRefHash {
  size_t operator()(const KeyRef& k) const { return k.hash; }
};

struct KeyRefEq {
  bool operator()(const KeyRef& a, const KeyRef& b) const {
    return a.hash == b.hash && SamePolicy(a.policy, b.policy) &&
           InferKeyEquals(*a.request, *b.request);
  }
};

uint64_t NextCacheId() {
  static std::atomic<uint64_t> next{1};
  return next.fetch_add(1, std::memory_order_relaxed);
}

// The per-thread front cache: direct-mapped by key hash. A slot owns a
// reference to its entry, which is what keeps borrowed results alive: only
// this thread replaces the slot, and only during a later lookup.
struct FrontSlot {
  uint64_t cache_id = 0;
  uint64_t epoch = 0;
  size_t hash = 0;
  std::shared_ptr<const void> entry;  // keeps the Entry alive
  const InferRequest* key = nullptr;
  const SelectionPolicy* policy = nullptr;
  const InferResult* value = nullptr;
  const std::atomic<bool>* referenced = nullptr;
};
constexpr size_t kFrontSlots = 64;
constexpr size_t kNoStripe = ~size_t{0};
// One thread-local object, so the hit path computes one TLS address.
struct FrontCache {
  FrontSlot slots[kFrontSlots];
  // Stripe of the hit/miss counters this thread uses (assigned on first
  // count).
  size_t stripe = kNoStripe;
};
thread_local FrontCache tl_front;

size_t ThreadStripe() {
  static std::atomic<size_t> next{0};
  size_t& stripe = tl_front.stripe;
  if (stripe == kNoStripe) stripe = next.fetch_add(1, std::memory_order_relaxed);
  return stripe;
}

FrontSlot& FrontSlotFor(size_t hash) { return tl_front.slots[hash % kFrontSlots]; }

}  // namespace

struct InferCache::Shard {
  mutable absl::Mutex mu;
  absl::flat_hash_map<KeyRef, std::shared_ptr<Entry>, KeyRefHash, KeyRefEq> map
      ABSL_GUARDED_BY(mu);
  // CLOCK ring of live entries; `hand` is the next slot the sweep looks at.
  std::vector<Entry*> ring ABSL_GUARDED_BY(mu);
  size_t hand ABSL_GUARDED_BY(mu) = 0;
  std::atomic<uint64_t> inserts{0};
  std::atomic<uint64_t> evictions{0};
};

InferCache::InferCache() : InferCache(Options()) {}

absl::StatusOr<std::unique_ptr<InferCache>> InferCache::Create(Options options) {
  if (options.shards < 1 || options.shards > 4096 ||
      (options.shards & (options.shards - 1)) != 0) {
    return absl::InvalidArgumentError(absl::StrCat(
        "inference cache: shards must be a power of two in [1, 4096], got ", options.shards));
  }
  if (options.capacity == 0) {
    return absl::InvalidArgumentError("inference cache: capacity must be at least 1");
  }
  return std::unique_ptr<InferCache>(new InferCache(std::move(options)));
}

// Options reach here validated (Create) or defaulted.
InferCache::InferCache(Options options) : options_(std::move(options)), id_(NextCacheId()) {
  OFS_CHECK(options_.shards >= 1 && (options_.shards & (options_.shards - 1)) == 0)
      << "shards must be a power of two, got " << options_.shards;
  shards_ = std::make_unique<Shard[]>(options_.shards);
  per_shard_capacity_ = std::max<size_t>(1, options_.capacity / options_.shards);
}

InferCache::~InferCache() = default;

size_t InferCache::HashOf(const InferRequest& request, const SelectionPolicy& policy) const {
  const size_t h = InferKeyHash(request) ^ (policy.fingerprint_hash() * 0xff51afd7ed558ccdull);
  return options_.hash_override_for_testing ? options_.hash_override_for_testing(h) : h;
}

InferCache::Shard& InferCache::ShardFor(size_t hash) const {
  // High bits pick the shard; the map and the front cache use the rest.
  return shards_[(hash >> 48) & static_cast<size_t>(options_.shards - 1)];
}

// The first kStripes threads own a stripe each and count with a plain
// load/store (no locked instruction on the hit path); later threads share
// the last stripe through atomic adds.
namespace {
void Bump(std::atomic<uint64_t>& c, bool owned) {
  if (owned) {
    c.store(c.load(std::memory_order_relaxed) + 1, std::memory_order_relaxed);
  } else {
    c.fetch_add(1, std::memory_order_relaxed);
  }
}
}  // namespace

void InferCache::CountHit() const {
  const size_t stripe = ThreadStripe();
  const bool owned = stripe < kStripes - 1;
  Bump(counters_[owned ? stripe : kStripes - 1].hits, owned);
}

void InferCache::CountMiss() const {
  const size_t stripe = ThreadStripe();
  const bool owned = stripe < kStripes - 1;
  Bump(counters_[owned ? stripe : kStripes - 1].misses, owned);
}

const InferResult* InferCache::FrontHit(const InferRequest& request,
                                        const SelectionPolicy* policy, size_t hash) const {
  const FrontSlot& slot = FrontSlotFor(hash);
  if (slot.cache_id != id_ || slot.hash != hash ||
      slot.epoch != epoch_.load(std::memory_order_acquire) ||
      !SamePolicy(slot.policy, policy) || !InferKeyEquals(*slot.key, request)) {
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

std::shared_ptr<const InferResult> InferCache::Lookup(const InferRequest& request,
                                                      const PolicyPtr& policy) const {
  const size_t hash = HashOf(request, *policy);
  if (const InferResult* hit = FrontHit(request, policy.get(), hash)) {
    return std::shared_ptr<const InferResult>(FrontSlotFor(hash).entry, hit);
  }
  std::shared_ptr<const InferResult> shared = LookupShared(request, policy, hash);
  if (shared == nullptr) {
    CountMiss();
  } else {
    CountHit();
  }
  return shared;
}

const InferResult* InferCache::LookupBorrowed(const InferRequest& request,
                                              const PolicyPtr& policy) const {
  const size_t hash = HashOf(request, *policy);
  if (const InferResult* hit = FrontHit(request, policy.get(), hash)) return hit;
  // A shard hit moves the entry into this thread's front slot, which keeps
  // it alive for the borrower.
  const InferResult* shared = LookupShared(request, policy, hash).get();
  if (shared == nullptr) {
    CountMiss();
  } else {
    CountHit();
  }
  return shared;
}

namespace {

// Points `slot` at `entry`, whose key, policy, value and reference bit it
// records; the previous entry's reference is dropped.
template <typename EntryT>
void FillSlot(FrontSlot& slot, uint64_t cache_id, uint64_t epoch, size_t hash,
              std::shared_ptr<EntryT> entry) {
  slot.cache_id = cache_id;
  slot.epoch = epoch;
  slot.hash = hash;
  slot.key = &entry->key;
  slot.policy = entry->policy.get();
  slot.value = &entry->value;
  slot.referenced = &entry->referenced;
  slot.entry = std::move(entry);
}

}  // namespace

std::shared_ptr<const InferResult> InferCache::LookupShared(const InferRequest& request,
                                                            const PolicyPtr& policy,
                                                            size_t hash) const {
  const uint64_t epoch = epoch_.load(std::memory_order_acquire);
  Shard& shard = ShardFor(hash);
  std::shared_ptr<Entry> entry;
  {
    absl::ReaderMutexLock lock(&shard.mu);
    auto it = shard.map.find(KeyRef{hash, &request, policy.get()});
    if (it == shard.map.end()) return nullptr;
    entry = it->second;
  }
  entry->referenced.store(true, std::memory_order_relaxed);
  const InferResult* value = &entry->value;
  std::shared_ptr<const InferResult> shared(entry, value);
  FillSlot(FrontSlotFor(hash), id_, epoch, hash, std::move(entry));
  return shared;
}

std::shared_ptr<const InferResult> InferCache::Insert(const InferRequest& request,
                                                      const PolicyPtr& policy,
                                                      InferResult result) {
  std::shared_ptr<Entry> entry =
      InsertHashed(request, policy, HashOf(request, *policy), std::move(result));
  const InferResult* value = &entry->value;
  return std::shared_ptr<const InferResult>(std::move(entry), value);
}

std::shared_ptr<InferCache::Entry> InferCache::InsertHashed(const InferRequest& request,
                                                            const PolicyPtr& policy, size_t hash,
                                                            InferResult result) {
  Shard& shard = ShardFor(hash);
  auto entry = std::make_shared<Entry>();
  entry->key = request;
  entry->policy = policy;
  entry->hash = hash;
  entry->value = std::move(result);
  absl::MutexLock lock(&shard.mu);
  auto it = shard.map.find(KeyRef{hash, &request, policy.get()});
  if (it != shard.map.end()) return it->second;
  if (shard.ring.size() >= per_shard_capacity_) {
    // CLOCK: clear reference bits until an unreferenced entry comes up.
    while (true) {
      Entry* victim = shard.ring[shard.hand];
      if (victim->referenced.exchange(false, std::memory_order_relaxed)) {
        shard.hand = (shard.hand + 1) % shard.ring.size();
        continue;
      }
      const size_t slot = shard.hand;
      shard.map.erase(KeyRef{victim->hash, &victim->key, victim->policy.get()});
      shard.ring[slot] = entry.get();
      shard.hand = (slot + 1) % shard.ring.size();
      shard.evictions.fetch_add(1, std::memory_order_relaxed);
      break;
    }
  } else {
    shard.ring.push_back(entry.get());
  }
  shard.inserts.fetch_add(1, std::memory_order_relaxed);
  const KeyRef key{hash, &entry->key, entry->policy.get()};
  shard.map.emplace(key, entry);
  return entry;
}

absl::StatusOr<std::shared_ptr<InferCache::Entry>> InferCache::InferAndInsert(
    const InferRequest& request, const PolicyPtr& policy, size_t hash) {
  absl::StatusOr<InferResult> result = InferSignature(request, *policy);
  if (!result.ok()) return result.status();
  if (result->used_broadcast_fallback) {
    fallback_inferences_.fetch_add(1, std::memory_order_relaxed);
  }
  return InsertHashed(request, policy, hash, *std::move(result));
}

absl::StatusOr<std::shared_ptr<const InferResult>> InferCache::GetOrInfer(
    const InferRequest& request, const PolicyPtr& policy) {
  std::shared_ptr<const InferResult> hit = Lookup(request, policy);
  if (hit != nullptr) return hit;
  absl::StatusOr<std::shared_ptr<Entry>> entry =
      InferAndInsert(request, policy, HashOf(request, *policy));
  if (!entry.ok()) return entry.status();
  const InferResult* value = &(*entry)->value;
  return std::shared_ptr<const InferResult>(*std::move(entry), value);
}

absl::StatusOr<const InferResult*> InferCache::GetOrInferBorrowed(const InferRequest& request,
                                                                  const PolicyPtr& policy) {
  const size_t hash = HashOf(request, *policy);
  if (const InferResult* hit = FrontHit(request, policy.get(), hash)) return hit;
  if (std::shared_ptr<const InferResult> shared = LookupShared(request, policy, hash)) {
    CountHit();
    return shared.get();  // the front slot holds it now
  }
  CountMiss();
  // The epoch is read before inferring: a Clear() meanwhile leaves the slot
  // stale (never answered again), not wrongly current.
  const uint64_t epoch = epoch_.load(std::memory_order_acquire);
  absl::StatusOr<std::shared_ptr<Entry>> entry = InferAndInsert(request, policy, hash);
  if (!entry.ok()) return entry.status();
  const InferResult* value = &(*entry)->value;
  // The slot's reference is what keeps the borrowed value alive.
  FillSlot(FrontSlotFor(hash), id_, epoch, hash, *std::move(entry));
  return value;
}

InferCache::Stats InferCache::stats() const {
  Stats s;
  s.capacity = per_shard_capacity_ * options_.shards;
  s.fallback_inferences = fallback_inferences_.load(std::memory_order_relaxed);
  for (const Counter& c : counters_) {
    s.hits += c.hits.load(std::memory_order_relaxed);
    s.misses += c.misses.load(std::memory_order_relaxed);
  }
  for (int i = 0; i < options_.shards; ++i) {
    const Shard& shard = shards_[i];
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
  // Front caches of every thread compare this epoch before answering.
  epoch_.fetch_add(1, std::memory_order_acq_rel);
}

}  // namespace oneflow_sbp
