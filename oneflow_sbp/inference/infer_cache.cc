#include "oneflow_sbp/inference/infer_cache.h"

#include <memory>
#include <utility>
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "absl/hash/hash.h"
#include "absl/strings/str_cat.h"
#include "absl/synchronization/mutex.h"
#include "oneflow_sbp/values/check.h"
#include "oneflow_sbp/inference/signature_inference.h"
#include "oneflow_sbp/values/status_macros.h"

namespace oneflow_sbp {

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

using infer_cache_internal::FrontSlot;
using infer_cache_internal::kFrontSlots;
using infer_cache_internal::tl_front;

// Set when this thread's owners below are destroyed (thread exit).
thread_local bool tl_front_owners_gone = false;

// The reference each front slot holds on its entry, which is what keeps
// borrowed results alive: only this thread replaces it, and only during a
// later lookup. Apart from the slots themselves (infer_cache.h) because a
// shared_ptr would give them a thread-local initialisation guard. At
// thread exit the slots are emptied before the references drop, so a
// lookup from a later thread-exit destructor misses instead of reading a
// freed entry (and FillSlot then leaves the slots alone).
struct FrontOwners {
  std::shared_ptr<const void> refs[kFrontSlots];
  ~FrontOwners() {
    for (FrontSlot& slot : tl_front.slots) slot = FrontSlot{};
    tl_front_owners_gone = true;
  }
};
thread_local FrontOwners tl_front_owners;

size_t SlotIndex(size_t hash) { return hash % kFrontSlots; }
FrontSlot& FrontSlotFor(size_t hash) { return tl_front.slots[SlotIndex(hash)]; }
const std::shared_ptr<const void>& FrontOwnerFor(size_t hash) {
  return tl_front_owners.refs[SlotIndex(hash)];
}

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

size_t InferCache::HashOf(size_t request_hash, const SelectionPolicy& policy) const {
  // The low bits (the front slot) are the request's alone, so that a
  // prepared key finds its slot without the policy (FrontKeyHit). A test's
  // hash override moves slots elsewhere: key hits then only come from keys
  // whose own bits happen to name the slot, which is slower, never wrong.
  const size_t h = request_hash ^ ((policy.fingerprint_hash() * 0xff51afd7ed558ccdull) &
                                   ~(infer_cache_internal::kFrontSlots - 1));
  return options_.hash_override_for_testing ? options_.hash_override_for_testing(h) : h;
}

InferCache::Shard& InferCache::ShardFor(size_t hash) const {
  // High bits pick the shard; the map and the front cache use the rest.
  return shards_[(hash >> 48) & static_cast<size_t>(options_.shards - 1)];
}

size_t InferCache::AssignStripe() {
  static std::atomic<size_t> next{0};
  tl_front.stripe_plus_one = next.fetch_add(1, std::memory_order_relaxed) + 1;
  return tl_front.stripe_plus_one;
}

void InferCache::CountMiss() const {
  Count(&Counter::misses);
}

const InferResult* InferCache::FrontHit(const InferRequest& request, uint64_t key_id,
                                        const SelectionPolicy* policy, size_t hash) const {
  FrontSlot& slot = FrontSlotFor(hash);
  if (slot.cache_id != id_ || slot.epoch != epoch_.load(std::memory_order_acquire)) {
    return nullptr;
  }
  // A key the slot knows by id is its request (ids are never reused, and
  // a key's request is immutable); a policy at the slot's address is its
  // policy. Anything else compares in full, and a match teaches the slot
  // the key's id.
  if (key_id == 0 || slot.key_id != key_id || slot.policy != policy) {
    if (slot.hash != hash || !SamePolicy(slot.policy, policy) ||
        !InferKeyEquals(*slot.key, request)) {
      return nullptr;
    }
    if (key_id != 0) slot.key_id = key_id;
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
  const size_t hash = HashOf(InferKeyHash(request), *policy);
  if (const InferResult* hit = FrontHit(request, /*key_id=*/0, policy.get(), hash)) {
    return std::shared_ptr<const InferResult>(FrontOwnerFor(hash), hit);
  }
  std::shared_ptr<const InferResult> shared = LookupShared(request, 0, policy, hash);
  if (shared == nullptr) {
    CountMiss();
  } else {
    CountHit();
  }
  return shared;
}

const InferResult* InferCache::LookupBorrowed(const InferRequest& request,
                                              const PolicyPtr& policy) const {
  return LookupBorrowedHashed(request, 0, policy, HashOf(InferKeyHash(request), *policy));
}

const InferResult* InferCache::LookupBorrowedMiss(const InferKey& key,
                                                  const PolicyPtr& policy) const {
  return LookupBorrowedHashed(key.request(), key.id(), policy, HashOf(key.hash(), *policy));
}

const InferResult* InferCache::LookupBorrowedHashed(const InferRequest& request, uint64_t key_id,
                                                    const PolicyPtr& policy, size_t hash) const {
  if (const InferResult* hit = FrontHit(request, key_id, policy.get(), hash)) return hit;
  // A shard hit moves the entry into this thread's front slot, which keeps
  // it alive for the borrower.
  const InferResult* shared = LookupShared(request, key_id, policy, hash).get();
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
void FillSlot(size_t hash, uint64_t key_id, uint64_t cache_id, uint64_t epoch,
              std::shared_ptr<EntryT> entry) {
  if (tl_front_owners_gone) {
    // A lookup from a destructor that runs after this thread's owners
    // went: no slot can hold the entry, so a process-wide list keeps it,
    // and a borrowed result, alive (the thread is ending; this is rare).
    static auto* mu = new absl::Mutex();
    static auto* kept = new std::vector<std::shared_ptr<const void>>();
    absl::MutexLock lock(mu);
    kept->push_back(std::move(entry));
    return;
  }
  FrontSlot& slot = FrontSlotFor(hash);
  slot.key_id = key_id;
  slot.cache_id = cache_id;
  slot.epoch = epoch;
  slot.hash = hash;
  slot.key = &entry->key;
  slot.policy = entry->policy.get();
  slot.value = &entry->value;
  slot.referenced = &entry->referenced;
  tl_front_owners.refs[SlotIndex(hash)] = std::move(entry);
}

}  // namespace

std::shared_ptr<const InferResult> InferCache::LookupShared(const InferRequest& request,
                                                            uint64_t key_id,
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
  FillSlot(hash, key_id, id_, epoch, std::move(entry));
  return shared;
}

std::shared_ptr<const InferResult> InferCache::Insert(const InferRequest& request,
                                                      const PolicyPtr& policy,
                                                      InferResult result) {
  std::shared_ptr<Entry> entry =
      InsertHashed(request, policy, HashOf(InferKeyHash(request), *policy), std::move(result));
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
  OFS_ASSIGN_OR_RETURN(InferResult result, InferSignature(request, *policy));
  if (result.used_broadcast_fallback) {
    fallback_inferences_.fetch_add(1, std::memory_order_relaxed);
  }
  return InsertHashed(request, policy, hash, std::move(result));
}

absl::StatusOr<std::shared_ptr<const InferResult>> InferCache::GetOrInfer(
    const InferRequest& request, const PolicyPtr& policy) {
  std::shared_ptr<const InferResult> hit = Lookup(request, policy);
  if (hit != nullptr) return hit;
  OFS_ASSIGN_OR_RETURN(std::shared_ptr<Entry> entry, InferAndInsert(request, policy,
      HashOf(InferKeyHash(request), *policy)));
  const InferResult* value = &entry->value;
  return std::shared_ptr<const InferResult>(std::move(entry), value);
}

absl::StatusOr<std::shared_ptr<const InferResult>> InferCache::GetOrInfer(
    const InferKey& key, const PolicyPtr& policy) {
  // At thread exit no slot owns anything: share the entry itself.
  if (tl_front_owners_gone) return GetOrInfer(key.request(), policy);
  // The borrowed answer sits in this thread's front slot, which owns the
  // entry: share that ownership.
  OFS_ASSIGN_OR_RETURN(const InferResult* borrowed, GetOrInferBorrowed(key, policy));
  return std::shared_ptr<const InferResult>(FrontOwnerFor(HashOf(key.hash(), *policy)),
                                            borrowed);
}

absl::StatusOr<const InferResult*> InferCache::GetOrInferBorrowed(const InferRequest& request,
                                                                  const PolicyPtr& policy) {
  return GetOrInferBorrowedHashed(request, 0, policy, HashOf(InferKeyHash(request), *policy));
}

absl::StatusOr<const InferResult*> InferCache::GetOrInferBorrowedMiss(const InferKey& key,
                                                                      const PolicyPtr& policy) {
  return GetOrInferBorrowedHashed(key.request(), key.id(), policy, HashOf(key.hash(), *policy));
}

absl::StatusOr<const InferResult*> InferCache::GetOrInferBorrowedHashed(
    const InferRequest& request, uint64_t key_id, const PolicyPtr& policy, size_t hash) {
  if (const InferResult* hit = FrontHit(request, key_id, policy.get(), hash)) return hit;
  if (std::shared_ptr<const InferResult> shared = LookupShared(request, key_id, policy, hash)) {
    CountHit();
    return shared.get();  // the front slot holds it now
  }
  CountMiss();
  // The epoch is read before inferring: a Clear() meanwhile leaves the slot
  // stale (never answered again), not wrongly current.
  const uint64_t epoch = epoch_.load(std::memory_order_acquire);
  OFS_ASSIGN_OR_RETURN(std::shared_ptr<Entry> entry, InferAndInsert(request, policy, hash));
  const InferResult* value = &entry->value;
  // The slot's reference is what keeps the borrowed value alive.
  FillSlot(hash, key_id, id_, epoch, std::move(entry));
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
