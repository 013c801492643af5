// Einsum rule generator: the 1-D SBP candidates of any op that an einsum
// spec describes, and an op definition from one line.
//
// Example (a custom op in one line):
//   registry.Register(*EinsumOp("bilinear", "bi,ij,bj->b"));
//   // inputs in_0, in_1, in_2; output out_0; shape and rule from the spec
//
// Letters shared by the inputs and the output are batch or free dims:
// splitting one splits every operand that carries it and the output the
// same way. Letters absent from the output are contracted: splitting one
// in every operand that carries it leaves each rank a partial sum (P). An
// einsum is linear in each operand, so one operand P with the others B
// gives P. A letter of extent 1 offers no split. Candidates come in that
// order: output letters in output order, contracted letters in order of
// first appearance, then the P of each operand. For "mk,kn->mn" this is
// exactly OneFlow's matmul list.
#ifndef OPS_EINSUM_RULE_H_
#define OPS_EINSUM_RULE_H_

#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "oneflow_sbp/rule_api/op_def.h"
#include "oneflow_sbp/rule_api/sbp_context.h"
#include "oneflow_sbp/values/tensor_desc.h"

namespace oneflow_sbp::ops {

struct EinsumSpec {
  std::vector<std::string> inputs;  // one letter string per operand
  std::string output;
};

// "bmk,bkn->bmn". Letters a-z and A-Z; every output letter appears in some
// input; no letter repeats within one operand or in the output (diagonals
// are not supported); no ellipsis. kInvalidArgument names the problem.
absl::StatusOr<EinsumSpec> ParseEinsum(absl::string_view text);

// Output desc: extents of the output letters; operands must agree on each
// letter's extent, match their letter count, and share a dtype.
absl::StatusOr<TensorDesc> EinsumOutputDesc(const EinsumSpec& spec,
                                            const std::vector<TensorDesc>& inputs);

// How an op maps its blobs onto a spec, for ops that take their candidates
// from the generator but keep a signature of their own (the matmul family).
struct EinsumBinding {
  // The op's inputs in spec.inputs order; empty: ctx.inputs() as they come.
  std::vector<OpArg> operands;
  // Inputs that are no operand and take the output's SBP in every candidate
  // (matmul's `_add_to_output`); an absent blob is skipped.
  std::vector<OpArg> follow_output;
  // Letters that offer their split even at extent 1. OneFlow's matmul family
  // lists its candidates without looking at extents and leaves a split of a
  // unit dim to the shape filter (which keeps it on a mesh axis of size 1);
  // the einsum op itself offers nothing for a unit letter.
  std::string keep_unit_letters;
};

// Appends the candidates described above for the call's inputs (in blob
// order, matched to spec.inputs) and its single output.
absl::Status EinsumGetSbp(SbpContext& ctx, const EinsumSpec& spec);
absl::Status EinsumGetSbp(SbpContext& ctx, const EinsumSpec& spec, const EinsumBinding& binding);

// An op whose inputs are `input_names` (default: one variadic arg "in",
// blobs in_0, in_1, ...) and whose output is `output_name`, with shape
// function and rule from `spec`. kInvalidArgument for a malformed spec or
// a wrong number of input names.
absl::StatusOr<OpDefBuilder> EinsumOp(const std::string& name, absl::string_view spec,
                                      std::vector<std::string> input_names = {},
                                      const std::string& output_name = "out");

}  // namespace oneflow_sbp::ops

#endif  // OPS_EINSUM_RULE_H_
