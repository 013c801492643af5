// The inference cache's key: how a request hashes and compares, and
// InferKey, a request prepared once for callers that ask it again and again.
//
// Example:
//   const InferKey key(request);            // hashes the request once
//   for (int step = 0; step < steps; ++step) {
//     OFS_ASSIGN_OR_RETURN(const InferResult* r, engine->InferBorrowed(key));
//     ...
//   }
//
// Why a prepared key: a cached lookup of a plain InferRequest hashes it and
// compares it in full with the entry it finds (op call, placement, every
// input's shape, dtype and NdSbp, constraints, cost options): about twenty
// words, which is most of a hit's cost. An InferKey owns an immutable copy
// of its request, its hash, and an id no other key has ever had (a 64-bit
// counter, never reused). A thread's front cache slot records the id of the
// key it last answered, so the next lookup of the same key compares one id
// instead of the request: a hit costs about what a raw hash-map probe does.
// A key the slot does not recognise is looked up by its request as usual,
// so keys are an optimisation only: the same request gives the same result
// with or without one, and two keys of equal requests share one entry.
#ifndef ONEFLOW_SBP_INFERENCE_INFER_KEY_H_
#define ONEFLOW_SBP_INFERENCE_INFER_KEY_H_

#include <cstddef>
#include <cstdint>

#include "oneflow_sbp/inference/infer_types.h"

namespace oneflow_sbp {

// Hash of the request's part of the cache key. Combines hashes precomputed
// in the OpCall, Placement and InferInputs, so the cost does not grow with
// shapes.
size_t InferKeyHash(const InferRequest& request);
// Equality of the request's part of the key: op call, placement, inputs,
// constraints, cost options and explain flag.
bool InferKeyEquals(const InferRequest& a, const InferRequest& b);

class InferKey {
 public:
  explicit InferKey(InferRequest request);

  const InferRequest& request() const { return request_; }
  // InferKeyHash(request()).
  size_t hash() const { return hash_; }
  // Unique to this key and its copies; never 0.
  uint64_t id() const { return id_; }

 private:
  // Const: a key's id promises its request, so neither may change (a move
  // copies, leaving the source whole).
  const InferRequest request_;
  const size_t hash_;
  const uint64_t id_;
};

}  // namespace oneflow_sbp

#endif  // ONEFLOW_SBP_INFERENCE_INFER_KEY_H_
