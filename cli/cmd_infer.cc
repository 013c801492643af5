#include "cli/cmd_infer.h"

#include <algorithm>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "absl/strings/ascii.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_join.h"
#include "io/infer_proto.h"
#include "io/message_decode.h"
#include "oneflow_sbp/inference/infer_request_spec.h"
#include "oneflow_sbp/values/attr_value.h"
#include "oneflow_sbp/values/quoted_input.h"
#include "oneflow_sbp/values/status_macros.h"
#include "cli/cli_format.h"

namespace oneflow_sbp::cli {
namespace {

// --attr=name=value, typed by the op's declaration of `name` (in the terms
// of `typed`, which may be an alias); an unknown name goes in as a string,
// for the request to report with the list of known attributes.
absl::Status ApplyAttrFlags(const std::vector<std::string>& attrs, const OpRegistry& registry,
                            const std::string& typed, const OpDef& def, const std::string& op,
                            InferRequestSpec* spec) {
  for (const std::string& a : attrs) {
    const size_t eq = a.find('=');
    if (eq == std::string::npos) {
      return absl::InvalidArgumentError(absl::StrCat(
          op, ": --attr=", QuotedInput(a), " must read name=value, e.g. --attr=transpose_b=true"));
    }
    const std::string name(absl::StripAsciiWhitespace(a.substr(0, eq)));
    const AttrDef* decl = def.FindAttr(registry.OpAttrName(typed, name));
    if (decl == nullptr) {
      // Let the op call report it with the list of known attributes.
      spec->SetAttr(name, AttrValue(a.substr(eq + 1)));
      continue;
    }
    absl::StatusOr<AttrValue> v = ParseAttrValue(decl->type, a.substr(eq + 1));
    if (!v.ok()) {
      return absl::InvalidArgumentError(
          absl::StrCat(op, ": attribute ", QuotedInput(name), ": ", v.status().message()));
    }
    spec->SetAttr(name, *std::move(v));
  }
  return absl::OkStatus();
}

// --constraint=bn=nd_sbp.
absl::Status ApplyConstraintFlags(const std::vector<std::string>& constraints,
                                  const std::string& op, InferRequestSpec* spec) {
  for (const std::string& c : constraints) {
    const size_t eq = c.find('=');
    if (eq == std::string::npos) {
      return absl::InvalidArgumentError(absl::StrCat(
          op, ": --constraint=", QuotedInput(c), " must read bn=nd_sbp, e.g. a_0='(S(0),B)'"));
    }
    absl::StatusOr<NdSbp> nd = NdSbp::Parse(c.substr(eq + 1));
    if (!nd.ok()) {
      return absl::InvalidArgumentError(absl::StrCat(
          op, ": constraint on ", c.substr(0, eq), ": ", nd.status().message()));
    }
    spec->SetConstraint(std::string(absl::StripAsciiWhitespace(c.substr(0, eq))), *nd);
  }
  return absl::OkStatus();
}

// --input=TENSOR or --input=bn=TENSOR: the first '=' comes before any '['
// of the tensor. A tensor that does not parse is kept as its error, which
// the request reports with the input's position.
InferRequestSpec::Input InputFlag(const std::string& in) {
  const size_t eq = in.find('=');
  const size_t bracket = in.find('[');
  if (eq != std::string::npos && (bracket == std::string::npos || eq < bracket)) {
    return {std::string(absl::StripAsciiWhitespace(in.substr(0, eq))),
            ParseInferInput(in.substr(eq + 1))};
  }
  return {std::nullopt, ParseInferInput(in)};
}

// The flags over the request (from --request, or empty): values into the
// spec, nothing through a message.
absl::Status ApplyFlags(const InferOptions& o, const OpRegistry& registry, InferRequestSpec* spec) {
  if (o.op) spec->op = *o.op;
  if (spec->op.empty()) {
    return absl::InvalidArgumentError(
        "--op is required, e.g. --op=matmul (`sbp ops` lists the ops)");
  }
  OFS_ASSIGN_OR_RETURN(std::shared_ptr<const OpDef> def, registry.Get(spec->op));
  // Messages name the op as typed: "unsqueeze (alias of expand_dims)" for
  // an alias, whose attribute names may differ from the op's.
  const std::string& typed = spec->op;
  const std::string op = typed == def->type_name()
                             ? def->type_name()
                             : absl::StrCat(UnquotedInput(typed), " (alias of ",
                                            def->type_name(), ")");
  OFS_RETURN_IF_ERROR(ApplyAttrFlags(o.attrs, registry, typed, *def, op, spec));
  if (o.placement) {
    OFS_ASSIGN_OR_RETURN(Placement p, io::DecodePlacement(*o.placement));
    spec->placement = std::move(p);
  }
  if (!o.inputs.empty()) {
    spec->inputs.clear();
    for (const std::string& in : o.inputs) spec->inputs.push_back(InputFlag(in));
  }
  OFS_RETURN_IF_ERROR(ApplyConstraintFlags(o.constraints, op, spec));
  if (o.cost) spec->cost_policy = *o.cost;
  if (o.explain) spec->explain = true;
  return absl::OkStatus();
}

std::string FormatCost(const CopyCost& cost) {
  if (!cost.supported()) return "unsupported";
  return absl::StrFormat("%.10g", cost.ValueOrFltMax());
}

std::string CandidateTable(const InferRequest& req, const InferResult& r) {
  const OpCall& call = *req.op;
  std::vector<const CandidateRecord*> rows;
  for (const CandidateRecord& c : r.candidates) rows.push_back(&c);
  // Ranked first by rank, then filtered ones in emission order.
  std::stable_sort(rows.begin(), rows.end(), [](const auto* a, const auto* b) {
    const int ra = a->rank == 0 ? 1 << 30 : a->rank;
    const int rb = b->rank == 0 ? 1 << 30 : b->rank;
    return ra < rb;
  });
  std::vector<std::string> signatures;
  size_t width = 9;
  for (const auto* c : rows) {
    signatures.push_back(SignatureToString(call, c->signature));
    width = std::max(width, signatures.back().size());
  }
  // OneFlow's 1-D ranking uses order values; N-D and the planned policy
  // have none, so the column shows how many inputs the candidate boxes.
  const bool one_d = req.placement.hierarchy().size() <= 1 && req.cost.policy.str() == "oneflow";
  std::string out = absl::StrFormat("%-5s %-*s %6s %14s  %s\n", "rank", static_cast<int>(width),
                                    "signature", one_d ? "order" : "boxed", "copy_cost",
                                    "status");
  for (size_t i = 0; i < rows.size(); ++i) {
    const CandidateRecord& c = *rows[i];
    const bool filtered = c.rank == 0;
    const bool chosen = c.status == CandidateStatus::kChosen;
    const std::string rank = filtered ? "-" : absl::StrCat(chosen ? "*" : " ", c.rank);
    const std::string key = one_d ? absl::StrCat(c.order_value) : absl::StrCat(c.mismatched_inputs);
    absl::StrAppend(&out, absl::StrFormat("%-5s %-*s %6s %14s  %s%s\n", rank,
                                          static_cast<int>(width), signatures[i],
                                          filtered ? "" : key,
                                          filtered ? "" : FormatCost(c.copy_cost),
                                          CandidateStatusName(c.status),
                                          c.note.empty() ? "" : ": " + c.note));
  }
  return out;
}

std::string TextReport(const InferRequest& req, const InferResult& r) {
  const OpCall& call = *req.op;
  std::string out = absl::StrCat(call.type_name(), " on ", req.placement.ToString(),
                                 " (cost policy ", req.cost.policy.str(), ", ", r.num_candidates,
                                 " candidates",
                                 r.used_broadcast_fallback
                                     ? "; NO SBP RULE: broadcast-only fallback"
                                     : "",
                                 ")\n");
  absl::StrAppend(&out, "signature: ", SignatureToString(call, r.signature), "\n");
  size_t width = 5;
  for (int b = 0; b < call.num_blobs(); ++b) width = std::max(width, call.bn(b).size());
  auto desc = [&](int b) -> const TensorDesc& {
    return b < call.num_inputs() ? req.inputs[b].desc() : r.output_descs[b - call.num_inputs()];
  };
  absl::StrAppend(&out, absl::StrFormat("  %-*s %-16s %-16s %s\n", static_cast<int>(width),
                                        "blob", "tensor", "producer", "chosen"));
  std::vector<std::string> boxing;
  for (int b = 0; b < call.num_blobs(); ++b) {
    const bool is_input = b < call.num_inputs();
    const std::string producer = is_input ? req.inputs[b].nd_sbp().ToString() : "";
    const std::string chosen = r.signature[b].ToString();
    absl::StrAppend(&out, absl::StrFormat("  %-*s %-16s %-16s %s\n", static_cast<int>(width),
                                          call.bn(b), desc(b).ToString(), producer, chosen));
    if (is_input && req.inputs[b].nd_sbp() != r.signature[b]) {
      boxing.push_back(absl::StrCat(call.bn(b), " ", producer, " -> ", chosen));
    }
  }
  absl::StrAppend(&out, "boxing: ", boxing.empty() ? "none" : absl::StrJoin(boxing, "; "),
                  "\n");
  return out;
}

}  // namespace

absl::StatusOr<std::string> RunInfer(const InferOptions& options, engine::Engine& engine) {
  OFS_ASSIGN_OR_RETURN(const OutputFormat format,
                       ParseOutputFormat(options.format, "text|json|textproto|table"));
  // A --request file is a message (the user's own); flags are values.
  InferRequestSpec spec;
  if (options.request) {
    oneflow::InferRequestProto proto;
    OFS_RETURN_IF_ERROR(io::DecodeMessage(*options.request, &proto));
    spec = io::InferRequestSpecFromProto(proto, engine.registry());
  }
  OFS_RETURN_IF_ERROR(ApplyFlags(options, engine.registry(), &spec));
  if (format == OutputFormat::kTable) spec.explain = true;
  OFS_ASSIGN_OR_RETURN(const InferRequest request, BuildInferRequest(spec, engine.registry()));
  OFS_ASSIGN_OR_RETURN(const std::shared_ptr<const InferResult> result, engine.Infer(request));
  if (format == OutputFormat::kTable) return CandidateTable(request, *result);
  if (format == OutputFormat::kJson || format == OutputFormat::kTextProto) {
    // Protobuf only for the output the user asked for as a message.
    return Render(format, io::InferResultToProto(request, *result), "");
  }
  std::string text = TextReport(request, *result);
  if (request.explain) absl::StrAppend(&text, "\n", CandidateTable(request, *result));
  return text;
}

}  // namespace oneflow_sbp::cli
