#include "tests/support/infer_test_util.h"

#include "absl/container/flat_hash_map.h"
#include "absl/synchronization/mutex.h"

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "oneflow_sbp/inference/candidate_list.h"
#include "oneflow_sbp/inference/signature_inference.h"
#include "ops/builtin_ops.h"
#include "oneflow_sbp/values/attr_value.h"
#include "oneflow_sbp/rule_api/op_registry.h"
#include "oneflow_sbp/rule_api/sbp_context.h"
#include "oneflow_sbp/values/status_macros.h"

namespace oneflow_sbp::testing {

OpRegistry& Registry() { return ops::BuiltinOpRegistry(); }

absl::StatusOr<std::shared_ptr<const OpCall>> MakeCall(const std::string& op,
                                                       int num_inputs,
                                                       const std::vector<std::string>& attrs,
                                                       OpRegistry* registry) {
  OpRegistry& reg = registry != nullptr ? *registry : Registry();
  absl::StatusOr<std::shared_ptr<const OpDef>> def = reg.Get(op);
  if (!def.ok()) return def.status();
  // "name=value" typed by the op's declaration of the attribute `op` calls
  // `name` (an alias may call it otherwise); ResolveCall then checks the
  // names as `op` has them, as the CLI and the engine do.
  AttrMap map;
  for (const std::string& a : attrs) {
    const size_t eq = a.find('=');
    if (eq == std::string::npos) return absl::InvalidArgumentError(absl::StrCat("attr ", a, " has no '='"));
    const std::string name = a.substr(0, eq);
    const AttrDef* decl = (*def)->FindAttr(reg.OpAttrName(op, name));
    // An undeclared name is kept as a string for ResolveCall or OpCall::Make to report.
    absl::StatusOr<AttrValue> v = decl == nullptr ? AttrValue(a.substr(eq + 1))
                                                  : ParseAttrValue(decl->type, a.substr(eq + 1));
    if (!v.ok()) return v.status();
    map.Set(name, *v);
  }
  absl::StatusOr<ResolvedCall> resolved = reg.ResolveCall(op, map);
  if (!resolved.ok()) return resolved.status();
  absl::StatusOr<std::vector<int>> counts = OpCall::DeduceInputCounts(*resolved->def, num_inputs);
  if (!counts.ok()) return counts.status();
  return OpCall::Make(std::move(resolved->def), *counts, resolved->attrs);
}

absl::StatusOr<engine::Engine*> EngineFor(OpRegistry* registry) {
  static absl::Mutex* mu = new absl::Mutex;
  static auto* engines = new absl::flat_hash_map<OpRegistry*, std::unique_ptr<engine::Engine>>;
  if (registry == nullptr) registry = &Registry();
  absl::MutexLock lock(mu);
  std::unique_ptr<engine::Engine>& engine = (*engines)[registry];
  if (engine == nullptr) {
    engine::Engine::Options options;
    options.registry = engine::Engine::Options::Borrow(*registry);
    absl::StatusOr<std::unique_ptr<engine::Engine>> created = engine::Engine::Create(std::move(options));
    if (!created.ok()) return created.status();
    engine = *std::move(created);
  }
  return engine.get();
}

absl::StatusOr<InferResult> Infer(const InferSpec& spec,
                                  std::shared_ptr<const OpCall>* call_out) {
  absl::StatusOr<std::shared_ptr<const OpCall>> call =
      MakeCall(spec.op, static_cast<int>(spec.inputs.size()), spec.attrs, spec.registry);
  if (!call.ok()) return call.status();
  InferRequest req;
  req.op = *call;
  absl::StatusOr<Placement> placement = Placement::Parse(spec.placement);
  if (!placement.ok()) return placement.status();
  req.placement = *placement;
  for (const std::string& in : spec.inputs) {
    const size_t colon = in.find(':');
    absl::StatusOr<TensorDesc> desc = TensorDesc::Parse(in.substr(0, colon));
    if (!desc.ok()) return desc.status();
    absl::StatusOr<NdSbp> nd = NdSbp::Parse(in.substr(colon + 1));
    if (!nd.ok()) return nd.status();
    req.inputs.push_back(InferInput(*desc, *nd));
  }
  if (!spec.constraints.empty()) {
    req.constraints.resize((*call)->num_blobs());
    for (const auto& [bn, text] : spec.constraints) {
      const int b = (*call)->BlobIndexOf(bn);
      if (b < 0) return absl::InvalidArgumentError(absl::StrCat("no blob ", bn));
      absl::StatusOr<NdSbp> nd = NdSbp::Parse(text);
      if (!nd.ok()) return nd.status();
      req.constraints[b] = *nd;
    }
  }
  req.explain = spec.explain;
  req.cost.policy = PolicyName::Of(spec.cost);
  if (call_out != nullptr) *call_out = *call;
  absl::StatusOr<engine::Engine*> engine = EngineFor(spec.registry);
  if (!engine.ok()) return engine.status();
  absl::StatusOr<std::shared_ptr<const InferResult>> r = (*engine)->Infer(req);
  if (!r.ok()) return r.status();
  return **r;
}

std::string InferToString(const InferSpec& spec) {
  std::shared_ptr<const OpCall> call;
  absl::StatusOr<InferResult> r = Infer(spec, &call);
  if (!r.ok()) return absl::StrCat("error: ", r.status().message());
  return SignatureToString(*call, r->signature);
}

namespace {

// The call, its input descs and its output descs, or an error message.
struct PreparedCall {
  std::shared_ptr<const OpCall> call;
  std::vector<TensorDesc> inputs;
  std::vector<TensorDesc> outputs;
};

absl::StatusOr<PreparedCall> Prepare(const std::string& op, const std::vector<std::string>& inputs,
                                     const std::vector<std::string>& attrs, OpRegistry* registry) {
  PreparedCall p;
  absl::StatusOr<std::shared_ptr<const OpCall>> call =
      MakeCall(op, static_cast<int>(inputs.size()), attrs, registry);
  if (!call.ok()) return call.status();
  p.call = *call;
  for (const std::string& in : inputs) {
    absl::StatusOr<TensorDesc> d = TensorDesc::Parse(in);
    if (!d.ok()) return d.status();
    p.inputs.push_back(*d);
  }
  absl::StatusOr<std::vector<TensorDesc>> outs = p.call->InferOutputDescs(p.inputs);
  if (!outs.ok()) return outs.status();
  p.outputs = *std::move(outs);
  return p;
}

}  // namespace

std::string CandidatesToString(const std::string& op, const std::vector<std::string>& inputs,
                               const std::vector<std::string>& attrs, int64_t parallel_num,
                               OpRegistry* registry) {
  absl::StatusOr<PreparedCall> p = Prepare(op, inputs, attrs, registry);
  if (!p.ok()) return absl::StrCat("error: ", p.status().message());
  absl::StatusOr<std::vector<SbpSignature>> list = GetSbpCandidates(
      *p->call, p->inputs, p->outputs, parallel_num, parallel_num, DeviceType::kCpu);
  if (!list.ok()) return absl::StrCat("error: ", list.status().message());
  return SignatureListToString(*p->call, *list);
}

std::string ExtendedCandidatesToString(const std::string& op,
                                       const std::vector<std::string>& inputs,
                                       const std::vector<std::string>& attrs) {
  absl::StatusOr<PreparedCall> p = Prepare(op, inputs, attrs, nullptr);
  if (!p.ok()) return absl::StrCat("error: ", p.status().message());
  absl::StatusOr<std::vector<SbpSignature>> base =
      GetSbpCandidates(*p->call, p->inputs, p->outputs, 2, 2, DeviceType::kCpu);
  absl::StatusOr<std::vector<SbpSignature>> all = GetSbpCandidates(
      *p->call, p->inputs, p->outputs, 2, 2, DeviceType::kCpu, CandidateSet::kExtended);
  if (!base.ok() || !all.ok()) {
    return absl::StrCat("error: ", (base.ok() ? all.status() : base.status()).message());
  }
  return SignatureListToString(
      *p->call, std::vector<SbpSignature>(all->begin() + static_cast<ptrdiff_t>(base->size()),
                                          all->end()));
}

absl::StatusOr<CandidateParts> SplitCandidates(const std::string& op,
                                               const std::vector<std::string>& inputs,
                                               const std::vector<std::string>& attrs) {
  std::vector<std::string> descs;
  for (const std::string& in : inputs) descs.push_back(in.substr(0, in.find('@')));
  OFS_ASSIGN_OR_RETURN(PreparedCall p, Prepare(op, descs, attrs, nullptr));
  const OpDef& def = p.call->def();
  if (!def.get_sbp_fn()) return CandidateParts{};
  SbpContext ctx(*p.call, p.inputs, p.outputs, 2, 2, DeviceType::kCpu);
  OFS_RETURN_IF_ERROR(def.get_sbp_fn()(ctx));
  OFS_RETURN_IF_ERROR(ctx.status());
  const std::vector<SbpSignature>& all = ctx.candidates();
  const auto cut = all.begin() + static_cast<ptrdiff_t>(ctx.oneflow_candidate_count());
  CandidateParts parts;
  parts.marked = ctx.marks_ours();
  parts.oneflow = SignatureListToString(*p.call, std::vector<SbpSignature>(all.begin(), cut));
  parts.ours = SignatureListToString(*p.call, std::vector<SbpSignature>(cut, all.end()));
  return parts;
}

std::string OutputDescs(const std::string& op, const std::vector<std::string>& inputs,
                        const std::vector<std::string>& attrs) {
  absl::StatusOr<PreparedCall> p = Prepare(op, inputs, attrs, nullptr);
  if (!p.ok()) return absl::StrCat("error: ", p.status().message());
  std::vector<std::string> parts;
  for (const TensorDesc& d : p->outputs) parts.push_back(d.ToString());
  return absl::StrJoin(parts, " ");
}

}  // namespace oneflow_sbp::testing
