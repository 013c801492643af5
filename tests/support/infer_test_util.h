// Shared helpers for engine tests: build op calls and run inference from
// the same compact strings the `sbp` tool takes.
//
//   std::string sig = InferOrDie("matmul", "cpu:0-3 [2,2]",
//                                {"f32[64,32]:(S(0),B)", "f32[32,48]:(B,S(1))"});
#ifndef TESTS_SUPPORT_INFER_TEST_UTIL_H_
#define TESTS_SUPPORT_INFER_TEST_UTIL_H_

#include <map>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "engine/engine.h"
#include "oneflow_sbp/inference/infer_types.h"
#include "oneflow_sbp/rule_api/op_call.h"
#include "oneflow_sbp/rule_api/op_registry.h"

namespace oneflow_sbp::testing {

// The global registry with the built-in ops.
OpRegistry& Registry();

// attrs: "name=value" strings parsed against the op's declared types.
absl::StatusOr<std::shared_ptr<const OpCall>> MakeCall(
    const std::string& op, int num_inputs, const std::vector<std::string>& attrs = {},
    OpRegistry* registry = nullptr);

struct InferSpec {
  std::string op;
  std::string placement;
  // "f32[64,32]:(S(0),B)"; on 1-D placements "f32[8]:S(0)".
  std::vector<std::string> inputs;
  std::vector<std::string> attrs;
  // bn -> nd_sbp string, e.g. {"a_0", "(S(0),B)"}.
  std::map<std::string, std::string> constraints;
  bool explain = false;
  // nullptr: Registry().
  OpRegistry* registry = nullptr;
  // A cost policy the engine knows: "oneflow" or "planned".
  std::string cost = "oneflow";
};

// The one Engine per registry (nullptr: Registry()) that tests infer
// through, as the CLI and the interpreter do.
absl::StatusOr<engine::Engine*> EngineFor(OpRegistry* registry = nullptr);

absl::StatusOr<InferResult> Infer(const InferSpec& spec,
                                  std::shared_ptr<const OpCall>* call_out = nullptr);

// The chosen signature as a one-line string, or "error: <message>".
std::string InferToString(const InferSpec& spec);

// The 1-D candidate list of the op's rule (without [+B]) as a golden line,
// for inputs given as "f32[8,4]" descs; hierarchy_value == parallel_num.
std::string CandidatesToString(const std::string& op, const std::vector<std::string>& inputs,
                               const std::vector<std::string>& attrs = {},
                               int64_t parallel_num = 2, OpRegistry* registry = nullptr);

// Only the extended candidates (OpDef::extended_sbp_fn: P(max)/P(min),
// offered under `planned`) that follow the OneFlow list, as a golden line.
std::string ExtendedCandidatesToString(const std::string& op,
                                       const std::vector<std::string>& inputs,
                                       const std::vector<std::string>& attrs = {});

// The rule's 1-D candidates (as CandidatesToString gives them) cut where
// it calls SbpContext::OursFollow(): OneFlow's own list, then ours.
// Inputs may carry a verifier domain ("i64[5]@idx4"), which is ignored.
struct CandidateParts {
  bool marked = false;  // the rule called OursFollow()
  std::string oneflow;  // golden line of OneFlow's list
  std::string ours;     // golden line of what follows it ("" if nothing)
};
absl::StatusOr<CandidateParts> SplitCandidates(const std::string& op,
                                               const std::vector<std::string>& inputs,
                                               const std::vector<std::string>& attrs = {});

// The output descs of the op's shape function, space-separated
// ("f32[4,11] bool[4,11]"), or "error: <message>".
std::string OutputDescs(const std::string& op, const std::vector<std::string>& inputs,
                        const std::vector<std::string>& attrs = {});

}  // namespace oneflow_sbp::testing

#endif  // TESTS_SUPPORT_INFER_TEST_UTIL_H_
