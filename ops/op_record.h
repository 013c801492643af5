// OpRecord: everything the catalog says about one op, in one place. The
// records are data, one [[op]] per op in ops/records/<family>.toml;
// ops/records/generate.py checks them and makes this table (a Bazel
// genrule) and the op tables of docs/OPS.md from them. docs/OPS.md ("One
// record per op") says why a data file and a generator, and which pieces
// the record holds today.
//
// Example (what the catalog knows of rms_norm):
//   const OpRecord* r = FindOpRecord("rms_norm");
//   // r->family == "norms", r->origin == OpOrigin::kOneFlow,
//   // r->backward == BackwardKind::kRule, r->cpu_kernel && r->cuda_kernel,
//   // r->recipe->inputs == {"f32[3,5,4]", "f32[4]"},
//   // r->aliases[1].name == "fused_rms_norm" (Paddle's name)
// tests/rules/op_completeness_test.cc runs this example.
//
// Layer: rules (ops/). Everything above reads the records: the registry's
// aliases (builtin_ops.cc), the verifier's input recipes, the planner's
// compute model and kernel collectives, the Python package's Paddle names,
// and tests/rules/op_completeness_test.cc, which checks each record against the
// registries (rule, kernels per device, backward rule) and fails naming the
// op and the missing piece.
#ifndef OPS_OP_RECORD_H_
#define OPS_OP_RECORD_H_

#include <optional>
#include <string>
#include <vector>

#include "absl/strings/string_view.h"
#include "oneflow_sbp/rule_api/op_registry.h"

namespace oneflow_sbp::ops {

// Whose op and candidate list it is: OneFlow's (SPEC.md §6, its list first
// and exactly), or ours (an op OneFlow fuses or lacks).
enum class OpOrigin { kOneFlow, kOurs };

// The op's backward rule (eager/backward_rules.h), or why it has none.
enum class BackwardKind {
  kRule,
  // Integer, boolean or piecewise-constant outputs, optimizer updates, fills.
  kNotDifferentiable,
  // A gradient op itself: second-order gradients are not supported.
  kGradientOp,
  // Differentiable; the rule is not written yet (autograd through it is an
  // error naming the op).
  kNotWrittenYet,
};

// How the planner prices the op's kernel (graph/compute_model.h).
enum class ComputeModel {
  kBytes,   // memory-bound: the bytes of every local blob
  kMatmul,  // 2 * out * k FLOPs on the local shards
};

// Collectives the kernel makes itself under some layouts
// (graph/kernel_collectives.h).
enum class KernelCollectives {
  kNone,
  // Classes split over mesh axes: two all-reduces of one f64 per row (row
  // maxima, then sums of exp) over the ranks that split the classes.
  kClassSplitAllReduce,
};

// The notation a name belongs to. OneFlow's and PyTorch's names are
// registry aliases (OpRegistry::RegisterAlias: `sbp infer --op=`, Python's
// infer and the interpreter accept them); Paddle's are the names of its
// SPMD rules (python/oneflow_sbp/spmd_rules.py).
enum class Notation { kOneFlow, kTorch, kPaddle };

struct OpAliasRecord {
  std::string name;
  std::vector<Notation> notations;
  // Attributes the alias names otherwise (alias's name -> op's).
  std::vector<AliasAttr> renamed;

  bool In(Notation n) const;
  // In OneFlow's or PyTorch's notation: a name the registry resolves.
  bool IsRegistryAlias() const { return In(Notation::kOneFlow) || In(Notation::kTorch); }
};

// The verifier's inputs for the op (kernels/verify/input_recipes.h has
// the spec syntax), when the default recipe does not fit.
struct VerifierRecipe {
  std::vector<std::string> inputs;
  std::vector<std::string> attrs;
};

struct OpRecord {
  std::string name;
  std::string family;
  std::string record_file;  // ops/records/<family>.toml
  std::string rules_file;   // the family's rules (shape function, SBP rule)
  OpOrigin origin = OpOrigin::kOneFlow;
  bool cpu_kernel = true;
  bool cuda_kernel = true;
  BackwardKind backward = BackwardKind::kRule;
  ComputeModel compute = ComputeModel::kBytes;
  KernelCollectives kernel_collectives = KernelCollectives::kNone;
  std::optional<VerifierRecipe> recipe;
  std::vector<OpAliasRecord> aliases;
  // The candidates the rule appends after OneFlow's own list
  // (SbpContext::OursFollow()) and why they are exact; empty if none.
  std::string ours;
};

// Every built-in op's record, sorted by name.
const std::vector<OpRecord>& BuiltinOpRecords();
// The record of a built-in op by its canonical name, or nullptr.
const OpRecord* FindOpRecord(absl::string_view name);

absl::string_view OpOriginName(OpOrigin origin);          // "oneflow", "ours"
absl::string_view BackwardKindName(BackwardKind kind);    // "rule", "gradient op", ...
absl::string_view NotationName(Notation notation);        // "oneflow", "torch", "paddle"

// The generated table (ops/records/generate.py), called once.
std::vector<OpRecord> MakeBuiltinOpRecords();

}  // namespace oneflow_sbp::ops

#endif  // OPS_OP_RECORD_H_
