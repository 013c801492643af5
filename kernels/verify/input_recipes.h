// Input recipes for the soundness verifier: for each op, the inputs (dtype,
// shape, value domain) and attributes that make a valid call, so that
// `sbp verify` can run every kernel on random data.
//
// The recipes are part of the op records (ops/records/*.toml, field
// `recipe`) and list only what cannot be derived: ops that
// need particular ranks, matching extents, attributes, positive values or
// in-range indices. Every other op gets the default recipe, one
// "f32[5,1,3]" per required input and default attributes, and its shape
// function decides whether that is valid (its outputs are always derived
// from the shape function, never listed). Shapes are chosen with uneven
// extents (5 over 2 or 3 ranks) and size-1 extents (a rank may hold an
// empty slice), the cases that break rules most often.
//
// An input spec is "<dtype>[<dims>]" with an optional "@<domain>":
//   (none)   floats: multiples of 1/8 in [-2, 2]; ints: [-4, 4];
//            bool: random
//   @pos     multiples of 1/8 in [0.25, 2] (log, sqrt, divisors, ...)
//   @int     integers in [-2, 2] (comparisons that should see ties)
//   @idx<N>  integers in [0, N) (indices, labels; N is the indexed extent)
//   @mask    0 and 1 (bool: false and true), every row of the last dim
//            keeping at least one element (attention's key_padding_mask,
//            masked_mean_pool's mask: a padded batch row still has a token)
// e.g. "i64[3,5]@idx7" for embedding indices into 7 rows.
//
//   absl::StatusOr<OpInputs> in = MakeOpInputs(def, FindInputRecipe("matmul"), 1);
#ifndef KERNELS_VERIFY_INPUT_RECIPES_H_
#define KERNELS_VERIFY_INPUT_RECIPES_H_

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "oneflow_sbp/storage/local_tensor.h"
#include "oneflow_sbp/rule_api/op_call.h"
#include "oneflow_sbp/rule_api/op_def.h"

namespace oneflow_sbp::kernels {

struct InputRecipe {
  std::string op;
  // Input specs in the op's declared input order (see above).
  std::vector<std::string> inputs;
  // "name=value", parsed against the op's declared attribute types.
  std::vector<std::string> attrs;
};

// The built-in recipes (from the op records), sorted by op.
const std::vector<InputRecipe>& BuiltinInputRecipes();
// The table's entry for `op`, or nullptr (use the default recipe).
const InputRecipe* FindInputRecipe(absl::string_view op);
// One "f32[5,1,3]" per required input arg, no attributes.
InputRecipe DefaultInputRecipe(const OpDef& def);

struct OpInputs {
  std::shared_ptr<const OpCall> call;
  std::vector<LocalTensor> inputs;
};

// The call and seeded input tensors of `recipe` for `def`. kInvalidArgument
// naming the op and spec for a malformed recipe; the shape function's error
// (prefixed with the op) when it rejects the inputs.
absl::StatusOr<OpInputs> MakeOpInputs(std::shared_ptr<const OpDef> def,
                                      const InputRecipe& recipe, uint64_t seed);

// The call of `def` with `num_inputs` blobs in declared order and
// "name=value" attributes parsed against their declared types.
absl::StatusOr<std::shared_ptr<const OpCall>> MakeCallFromStrings(
    std::shared_ptr<const OpDef> def, int num_inputs, const std::vector<std::string>& attrs);

}  // namespace oneflow_sbp::kernels

#endif  // KERNELS_VERIFY_INPUT_RECIPES_H_
