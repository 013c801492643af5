// InferRequestSpec: an inference request as a user states it, before it is
// checked against the op: the op's name as typed (an alias, maybe), the
// attributes in that name's terms, inputs in blob order or by blob name
// ("gamma", "gamma_0"), constraints by blob name, a cost policy by name.
// BuildInferRequest checks all of it and makes the InferRequest the engine
// takes. The protobuf bridge (io/infer_proto.h) and `sbp infer`'s flags
// (cli/cmd_infer.cc) each fill one; neither goes through the other.
//
// Parsed parts are values; a part that failed to parse may be kept as its
// error, which BuildInferRequest reports in a fixed order (op, attributes,
// placement, inputs, the call, constraints) so that a request with several
// faults always names the same one. tests/inference/infer_request_spec_test.cc
// runs this example:
//
//   InferRequestSpec spec;
//   spec.op = "matmul";
//   spec.placement = *Placement::Parse("cpu:0-1");
//   spec.inputs.push_back({std::nullopt, ParseInferInput("f32[8,4]:S(0)")});
//   spec.inputs.push_back({std::nullopt, ParseInferInput("f32[4,6]:B")});
//   absl::StatusOr<InferRequest> req = BuildInferRequest(spec, registry);
#ifndef ONEFLOW_SBP_INFERENCE_INFER_REQUEST_SPEC_H_
#define ONEFLOW_SBP_INFERENCE_INFER_REQUEST_SPEC_H_

#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "oneflow_sbp/inference/copy_cost.h"
#include "oneflow_sbp/inference/infer_types.h"
#include "oneflow_sbp/rule_api/op_registry.h"
#include "oneflow_sbp/values/attr_value.h"
#include "oneflow_sbp/values/nd_sbp.h"
#include "oneflow_sbp/values/placement.h"

namespace oneflow_sbp {

struct InferRequestSpec {
  struct Input {
    // The blob it is ("a", "gamma_0"); all inputs are named or none are.
    std::optional<std::string> bn;
    absl::StatusOr<InferInput> value;
  };
  // As typed; may be an alias. Empty: the request names no op.
  std::string op;
  // By name, in the typed name's terms (an alias's own attribute names);
  // one entry per name.
  std::vector<std::pair<std::string, absl::StatusOr<AttrValue>>> attrs;
  // Unset: the request has none (an error).
  std::optional<absl::StatusOr<Placement>> placement;
  std::vector<Input> inputs;
  // By blob name; one entry per name.
  std::vector<std::pair<std::string, absl::StatusOr<NdSbp>>> constraints;
  // Unset: the default ("oneflow"); the Engine rejects names it does not know.
  std::optional<std::string> cost_policy;
  absl::StatusOr<PartialPenalty> partial_penalty = PartialPenalty::kProportional;
  bool explain = false;

  // Sets (or replaces) the attribute or constraint of that name.
  void SetAttr(const std::string& name, absl::StatusOr<AttrValue> value);
  void SetConstraint(const std::string& bn, absl::StatusOr<NdSbp> nd_sbp);
};

// Validates everything: a known op (kNotFound), attributes declared and of
// the right type, a placement, inputs matching the op's args (all named or
// none), constraints on blobs the op has, a partial penalty that parsed.
// Messages name the op (canonical name) and the blob or attribute.
absl::StatusOr<InferRequest> BuildInferRequest(const InferRequestSpec& spec,
                                               const OpRegistry& registry);

// Parses "f32[64,32]:(S(0),B)" (dtype, shape, producer nd_sbp).
absl::StatusOr<InferInput> ParseInferInput(absl::string_view text);

}  // namespace oneflow_sbp

#endif  // ONEFLOW_SBP_INFERENCE_INFER_REQUEST_SPEC_H_
