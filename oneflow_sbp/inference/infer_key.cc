#include "oneflow_sbp/inference/infer_key.h"

#include <atomic>
#include <utility>

namespace oneflow_sbp {

namespace {

// Odd multipliers, one per position: the parts are multiplied independently
// and summed, so the multiplications of n inputs are not one dependent
// chain of mixing rounds.
constexpr uint64_t kFirstMul = 0x9E3779B97F4A7C15ull;
constexpr uint64_t kMulStep = 0xC2B2AE3D27D4EB4Full * 2;  // even: every multiplier stays odd

// The parts are already well mixed (absl hashes of each object); the final
// round spreads them to the low bits (front slot) and the high bits (shard).
uint64_t Finish(uint64_t h) {
  h ^= h >> 32;
  h *= 0xD6E8FEB86659FD93ull;
  h ^= h >> 29;
  return h;
}

}  // namespace

// Combines hashes precomputed in the op call, placement and inputs, so the
// cost stays a few multiplications however large the shapes are.
size_t InferKeyHash(const InferRequest& r) {
  uint64_t h = (r.op == nullptr ? 0 : r.op->hash()) ^ (r.placement.hash() * 0xFF51AFD7ED558CCDull);
  h += ((uint64_t{r.cost.policy.id()} << 16) ^
        (static_cast<uint64_t>(r.cost.partial_penalty) << 8) ^ (r.explain ? 1 : 0) ^
        (uint64_t{r.inputs.size()} << 40)) *
       0xC4CEB9FE1A85EC53ull;
  uint64_t mul = kFirstMul;
  for (const InferInput& in : r.inputs) {
    h += in.hash() * mul;
    mul += kMulStep;
  }
  for (const std::optional<NdSbp>& c : r.constraints) {
    const uint64_t part =
        c ? c->packed() ^ (uint64_t{static_cast<uint8_t>(c->size())} << 56) : 0x5bd1e995ull;
    h += (part + 1) * mul;
    mul += kMulStep;
  }
  return static_cast<size_t>(Finish(h));
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

namespace {
uint64_t NextKeyId() {
  static std::atomic<uint64_t> next{1};
  return next.fetch_add(1, std::memory_order_relaxed);
}
}  // namespace

InferKey::InferKey(InferRequest request)
    : request_(std::move(request)), hash_(InferKeyHash(request_)), id_(NextKeyId()) {}

}  // namespace oneflow_sbp
