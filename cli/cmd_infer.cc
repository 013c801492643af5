#include "cli/cmd_infer.h"

#include <algorithm>
#include <string>
#include <vector>

#include "absl/strings/ascii.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_join.h"
#include "io/infer_proto.h"
#include "io/proto_convert.h"
#include "io/message_decode.h"
#include "oneflow_sbp/values/quoted_input.h"
#include "oneflow_sbp/values/status_macros.h"
#include "cli/cli_format.h"

namespace oneflow_sbp::cli {
namespace {

// --attr=name=value, typed by the op's declaration of `name` (in the terms
// of `typed`, which may be an alias); an unknown name goes in as a string,
// for the op call to report with the list of known attributes.
absl::Status ApplyAttrFlags(const std::vector<std::string>& attrs, const OpRegistry& registry,
                            const std::string& typed, const OpDef& def, const std::string& op,
                            oneflow::InferRequestProto* proto) {
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
      (*proto->mutable_attr())[name].set_s(a.substr(eq + 1));
      continue;
    }
    absl::StatusOr<AttrValue> v = ParseAttrValue(decl->type, a.substr(eq + 1));
    if (!v.ok()) {
      return absl::InvalidArgumentError(
          absl::StrCat(op, ": attribute ", QuotedInput(name), ": ", v.status().message()));
    }
    oneflow::AttrValueProto& p = (*proto->mutable_attr())[name];
    switch (v->type()) {
      case AttrType::kInt: p.set_i(v->i()); break;
      case AttrType::kFloat: p.set_f(v->f()); break;
      case AttrType::kBool: p.set_b(v->b()); break;
      case AttrType::kString: p.set_s(v->s()); break;
      case AttrType::kInts:
        p.mutable_ints();
        for (int64_t x : v->ints()) p.mutable_ints()->add_value(x);
        break;
    }
  }
  return absl::OkStatus();
}

// --constraint=bn=nd_sbp.
absl::Status ApplyConstraintFlags(const std::vector<std::string>& constraints,
                                  const std::string& op, oneflow::InferRequestProto* proto) {
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
    (*proto->mutable_constraint())[std::string(absl::StripAsciiWhitespace(c.substr(0, eq)))] =
        io::ToProto(*nd);
  }
  return absl::OkStatus();
}

absl::Status ApplyFlags(const InferOptions& o, const OpRegistry& registry,
                        oneflow::InferRequestProto* proto) {
  if (o.op) proto->set_op_type_name(*o.op);
  if (proto->op_type_name().empty()) {
    return absl::InvalidArgumentError(
        "--op is required, e.g. --op=matmul (`sbp ops` lists the ops)");
  }
  absl::StatusOr<std::shared_ptr<const OpDef>> def = registry.Get(proto->op_type_name());
  if (!def.ok()) return def.status();
  // Messages name the op as typed: "unsqueeze (alias of expand_dims)" for
  // an alias, whose attribute names may differ from the op's.
  const std::string& typed = proto->op_type_name();
  const std::string op = typed == (*def)->type_name()
                             ? (*def)->type_name()
                             : absl::StrCat(UnquotedInput(typed), " (alias of ",
                                            (*def)->type_name(), ")");
  OFS_RETURN_IF_ERROR(ApplyAttrFlags(o.attrs, registry, typed, **def, op, proto));
  if (o.placement) {
    absl::StatusOr<Placement> p = io::DecodePlacement(*o.placement);
    if (!p.ok()) return p.status();
    proto->clear_parallel_conf();
    proto->set_placement(p->ToString());
  }
  if (!o.inputs.empty()) {
    proto->clear_input();
    for (const std::string& in : o.inputs) {
      oneflow::InferInputProto* p = proto->add_input();
      // "bn=tensor": the first '=' comes before any '[' of the tensor.
      const size_t eq = in.find('=');
      const size_t bracket = in.find('[');
      if (eq != std::string::npos && (bracket == std::string::npos || eq < bracket)) {
        p->set_bn(std::string(absl::StripAsciiWhitespace(in.substr(0, eq))));
        p->set_tensor(in.substr(eq + 1));
      } else {
        p->set_tensor(in);
      }
    }
  }
  OFS_RETURN_IF_ERROR(ApplyConstraintFlags(o.constraints, op, proto));
  if (o.cost) proto->set_cost_policy(*o.cost);
  if (o.explain) proto->set_explain(true);
  return absl::OkStatus();
}

std::string FormatCost(const oneflow::CandidateProto& c) {
  if (c.unsupported()) return "unsupported";
  return absl::StrFormat("%.10g", c.copy_cost());
}

std::string CandidateTable(const oneflow::InferResultProto& r) {
  std::vector<const oneflow::CandidateProto*> rows;
  for (const auto& c : r.candidates()) rows.push_back(&c);
  // Ranked first by rank, then filtered ones in emission order.
  std::stable_sort(rows.begin(), rows.end(), [](const auto* a, const auto* b) {
    const int ra = a->rank() == 0 ? 1 << 30 : a->rank();
    const int rb = b->rank() == 0 ? 1 << 30 : b->rank();
    return ra < rb;
  });
  size_t width = 9;
  for (const auto* c : rows) width = std::max(width, c->signature().size());
  // OneFlow's 1-D ranking uses order values; N-D and the planned policy
  // have none, so the column shows how many inputs the candidate boxes.
  const bool one_d =
      r.parallel_conf().hierarchy().dim_size() <= 1 && r.cost_policy() == "oneflow";
  std::string out = absl::StrFormat("%-5s %-*s %6s %14s  %s\n", "rank", static_cast<int>(width),
                                    "signature", one_d ? "order" : "boxed", "copy_cost",
                                    "status");
  for (const auto* c : rows) {
    const bool filtered = c->rank() == 0;
    const std::string rank = filtered ? "-" : absl::StrCat(c->status() == "chosen" ? "*" : " ",
                                                           c->rank());
    const std::string key = one_d ? absl::StrCat(c->order_value())
                                  : absl::StrCat(c->mismatched_inputs());
    absl::StrAppend(&out, absl::StrFormat("%-5s %-*s %6s %14s  %s%s\n", rank,
                                          static_cast<int>(width), c->signature(),
                                          filtered ? "" : key,
                                          filtered ? "" : FormatCost(*c),
                                          c->status(),
                                          c->note().empty() ? "" : ": " + c->note()));
  }
  return out;
}

std::string TextReport(const oneflow::InferResultProto& r) {
  std::string out = absl::StrCat(r.op_type_name(), " on ", r.placement(), " (cost policy ",
                                 r.cost_policy(), ", ", r.num_candidates(), " candidates",
                                 r.used_broadcast_fallback()
                                     ? "; NO SBP RULE: broadcast-only fallback"
                                     : "",
                                 ")\n");
  absl::StrAppend(&out, "signature: ", r.signature(), "\n");
  size_t width = 5;
  for (const auto& b : r.inputs()) width = std::max(width, b.bn().size());
  for (const auto& b : r.outputs()) width = std::max(width, b.bn().size());
  auto tensor = [](const oneflow::BlobResultProto& b) {
    std::vector<int64_t> dims(b.shape().dim().begin(), b.shape().dim().end());
    std::string s = absl::StrCat(b.dtype(), "[");
    for (size_t i = 0; i < dims.size(); ++i) absl::StrAppend(&s, i ? "," : "", dims[i]);
    return s + "]";
  };
  absl::StrAppend(&out, absl::StrFormat("  %-*s %-16s %-16s %s\n", static_cast<int>(width),
                                        "blob", "tensor", "producer", "chosen"));
  std::vector<std::string> boxing;
  for (const auto& b : r.inputs()) {
    absl::StrAppend(&out, absl::StrFormat("  %-*s %-16s %-16s %s\n", static_cast<int>(width),
                                          b.bn(), tensor(b), b.producer_nd_sbp_str(),
                                          b.nd_sbp_str()));
    if (b.needs_boxing()) {
      boxing.push_back(absl::StrCat(b.bn(), " ", b.producer_nd_sbp_str(), " -> ", b.nd_sbp_str()));
    }
  }
  for (const auto& b : r.outputs()) {
    absl::StrAppend(&out, absl::StrFormat("  %-*s %-16s %-16s %s\n", static_cast<int>(width),
                                          b.bn(), tensor(b), "", b.nd_sbp_str()));
  }
  absl::StrAppend(&out, "boxing: ", boxing.empty() ? "none" : absl::StrJoin(boxing, "; "),
                  "\n");
  return out;
}

}  // namespace

absl::StatusOr<std::string> RunInfer(const InferOptions& options, engine::Engine& engine) {
  absl::StatusOr<OutputFormat> format =
      ParseOutputFormat(options.format, "text|json|textproto|table");
  if (!format.ok()) return format.status();
  oneflow::InferRequestProto proto;
  if (options.request) {
    absl::Status s = io::DecodeMessage(*options.request, &proto);
    if (!s.ok()) return s;
  }
  absl::Status s = ApplyFlags(options, engine.registry(), &proto);
  if (!s.ok()) return s;
  if (*format == OutputFormat::kTable) proto.set_explain(true);
  absl::StatusOr<InferRequest> request = io::InferRequestFromProto(proto, engine.registry());
  if (!request.ok()) return request.status();
  absl::StatusOr<std::shared_ptr<const InferResult>> result = engine.Infer(*request);
  if (!result.ok()) return result.status();
  const oneflow::InferResultProto out = io::InferResultToProto(*request, **result);
  if (*format == OutputFormat::kTable) return CandidateTable(out);
  std::string text = TextReport(out);
  if (request->explain) absl::StrAppend(&text, "\n", CandidateTable(out));
  return Render(*format, out, text);
}

}  // namespace oneflow_sbp::cli
