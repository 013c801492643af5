// Values, rules and boxing: the parts of the module that need no ranks.
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "boxing/boxing_plan.h"
#include "oneflow_sbp/values/nd_sbp.h"
#include "oneflow_sbp/values/placement.h"
#include "oneflow_sbp/values/quoted_input.h"
#include "oneflow_sbp/rule_api/sbp_signature.h"
#include "oneflow_sbp/values/seeded_stream.h"
#include "oneflow_sbp/values/tensor_desc.h"
#include "ops/builtin_ops.h"
#include "ops/op_record.h"
#include "python/native/bindings.h"
#include "python/native/conversions.h"
#include "python/native/gil_release.h"

namespace oneflow_sbp::python {
namespace {

py::dict PlacementInfo(const Placement& p) {
  py::dict d;
  d["text"] = p.ToString();
  d["device"] = std::string(DeviceTypeName(p.device_type()));
  py::list ranks;
  for (int64_t id = 0; id < p.parallel_num(); ++id) ranks.append(p.RankOf(id));
  d["ranks"] = ranks;
  d["hierarchy"] = ShapeToPython(p.hierarchy());
  return d;
}

py::list Ints(absl::Span<const int64_t> v) {
  py::list l;
  for (int64_t x : v) l.append(x);
  return l;
}

py::dict PlanToPython(const boxing::BoxingPlan& plan) {
  py::dict d;
  d["shape"] = ShapeToPython(plan.shape.dims());
  d["dtype"] = std::string(DataTypeName(plan.dtype));
  d["src_placement"] = plan.src_placement.ToString();
  d["dst_placement"] = plan.dst_placement.ToString();
  d["src"] = plan.src.ToString();
  d["dst"] = plan.dst.ToString();
  d["ranks"] = Ints(plan.ranks);
  py::list steps;
  for (const boxing::BoxingStep& s : plan.steps) {
    py::dict st;
    st["collective"] = std::string(boxing::StepKindName(s.kind));
    py::list axes;
    for (int a = 0; a < NdSbp::kMaxAxes; ++a) {
      if (s.axes & AxisBit(a)) axes.append(a);
    }
    st["mesh_axes"] = axes;
    st["from"] = s.from.ToString();
    st["to"] = s.to.ToString();
    st["result"] = s.result.ToString();
    st["bytes_sent"] = Ints(s.bytes_sent);
    st["bytes_received"] = Ints(s.bytes_received);
    st["bytes_per_rank"] = s.max_rank_bytes();
    st["total_bytes"] = s.total_bytes();
    py::list groups;
    for (const auto& g : s.groups) groups.append(Ints(g));
    st["groups"] = groups;
    st["time_s"] = s.time_s;
    steps.append(st);
  }
  d["steps"] = steps;
  d["total_bytes"] = plan.total_bytes();
  d["max_rank_bytes"] = plan.max_rank_bytes();
  d["time_s"] = plan.time_s();
  d["summary"] = plan.Summary();
  return d;
}

// The request of one `infer` call from Python values: the op call, each
// input's (shape, dtype, nd_sbp) and the constraints by blob name.
InferRequest InferRequestFromPython(engine::Engine& engine, const std::string& op, const py::list& inputs,
                                    const py::dict& attrs, const std::string& placement_text,
                                    const py::object& constraints) {
  InferRequest req;
  req.placement = ParsePlacement(placement_text);
  AttrMap attr_map = Unwrap(AttrsFromPython(attrs));
  req.op = Unwrap(engine.MakeCall(op, static_cast<int>(py::len(inputs)), attr_map));
  for (size_t i = 0; i < py::len(inputs); ++i) {
    py::tuple in = inputs[i].cast<py::tuple>();
    TensorDesc desc;
    desc.shape = Unwrap(ShapeFromPython(in[0]));
    desc.dtype = Unwrap(DataTypeFromName(in[1].cast<std::string>()));
    const NdSbp nd = ParseNdSbp(in[2].cast<std::string>(),
                                       absl::StrCat(op, ": input ", req.op->bn(i)));
    req.inputs.emplace_back(desc, nd);
  }
  if (!constraints.is_none()) {
    req.constraints.assign(req.op->num_blobs(), std::nullopt);
    for (auto [k, v] : constraints.cast<py::dict>()) {
      const std::string bn = py::str(k);
      const int blob = req.op->BlobIndexOf(bn);
      if (blob < 0) {
        std::string known;
        for (int b = 0; b < req.op->num_blobs(); ++b) {
          absl::StrAppend(&known, b ? ", " : "", req.op->bn(b));
        }
        throw py::value_error(absl::StrCat(op, ": constraint on unknown blob ", QuotedInput(bn),
                                           "; the call's blobs are ", known));
      }
      req.constraints[blob] = ParseNdSbp(py::str(v), absl::StrCat(op, ": constraint ", bn));
    }
  }
  return req;
}

// Each input's chosen layout and the boxing plan that gets it there.
py::list InputsToPython(engine::Engine& engine, const InferRequest& req, const InferResult& result) {
  const OpCall& call = *req.op;
  py::list ins;
  for (int i = 0; i < call.num_inputs(); ++i) {
    const InferInput& in = req.inputs[i];
    const NdSbp& chosen = result.signature[i];
    py::dict b;
    b["bn"] = call.bn(i);
    b["shape"] = ShapeToPython(in.desc().shape.dims());
    b["dtype"] = std::string(DataTypeName(in.desc().dtype));
    b["producer"] = in.nd_sbp().ToString();
    b["nd_sbp"] = chosen.ToString();
    py::list steps;
    int64_t bytes = 0;
    if (chosen != in.nd_sbp()) {
      boxing::PlanRequest pr{in.desc().shape, in.desc().dtype, req.placement, in.nd_sbp(),
                             req.placement, chosen};
      absl::StatusOr<std::shared_ptr<const boxing::BoxingPlan>> plan;
      {
        GilRelease release;
        plan = engine.Plan(pr);
      }
      if (plan.ok()) {
        py::dict p = PlanToPython(**plan);
        steps = p["steps"];
        bytes = (*plan)->total_bytes();
      }
    }
    b["boxing_steps"] = steps;
    b["boxing_bytes"] = bytes;
    ins.append(b);
  }
  return ins;
}

// Every candidate the engine ranked (explain=True).
py::list CandidatesToPython(const OpCall& call, const InferResult& result) {
  py::list cands;
  for (const CandidateRecord& c : result.candidates) {
    py::dict r;
    r["rank"] = c.rank;
    r["signature"] = SignatureToString(call, c.signature);
    r["order_value"] = c.order_value;
    r["copy_cost"] = c.copy_cost.supported() ? py::object(py::float_(c.copy_cost.value()))
                                             : py::object(py::none());
    r["mismatched_inputs"] = c.mismatched_inputs;
    r["status"] = std::string(CandidateStatusName(c.status));
    r["note"] = c.note;
    cands.append(r);
  }
  return cands;
}

py::dict Infer(const std::string& op, const py::list& inputs, const py::dict& attrs,
               const std::string& placement_text, const std::string& cost,
               const py::object& constraints, bool explain) {
  engine::Engine& engine = SharedEngine();
  InferRequest req = InferRequestFromPython(engine, op, inputs, attrs, placement_text, constraints);
  req.cost.policy = PolicyName::Of(cost);
  req.explain = explain;
  std::shared_ptr<const InferResult> result;
  {
    GilRelease release;
    absl::StatusOr<std::shared_ptr<const InferResult>> r = engine.Infer(req);
    py::gil_scoped_acquire acquire;
    result = Unwrap(std::move(r));
  }
  const OpCall& call = *req.op;
  py::dict d;
  d["op"] = call.type_name();
  d["placement"] = req.placement.ToString();
  d["cost"] = cost;
  d["signature"] = SignatureToString(call, result->signature);
  d["num_candidates"] = result->num_candidates;
  d["used_broadcast_fallback"] = result->used_broadcast_fallback;
  d["inputs"] = InputsToPython(engine, req, *result);
  py::list outs;
  for (int o = 0; o < call.num_outputs(); ++o) {
    py::dict b;
    b["bn"] = call.bn(call.num_inputs() + o);
    b["shape"] = ShapeToPython(result->output_descs[o].shape.dims());
    b["dtype"] = std::string(DataTypeName(result->output_descs[o].dtype));
    b["nd_sbp"] = result->signature[call.num_inputs() + o].ToString();
    outs.append(b);
  }
  d["outputs"] = outs;
  d["candidates"] = CandidatesToPython(call, *result);
  return d;
}

py::dict PlanBoxing(const py::object& shape, const std::string& dtype, const std::string& placement,
                    const std::string& src, const std::string& dst,
                    const std::optional<std::string>& dst_placement) {
  boxing::PlanRequest req;
  req.shape = Unwrap(ShapeFromPython(shape));
  req.dtype = Unwrap(DataTypeFromName(dtype));
  req.src_placement = ParsePlacement(placement);
  req.dst_placement = dst_placement ? ParsePlacement(*dst_placement) : req.src_placement;
  req.src = ParseNdSbp(src, "src");
  req.dst = ParseNdSbp(dst, "dst");
  absl::StatusOr<std::shared_ptr<const boxing::BoxingPlan>> plan;
  {
    GilRelease release;
    plan = SharedEngine().Plan(req);
  }
  return PlanToPython(*Unwrap(std::move(plan)));
}

// A built-in op's record (ops/op_record.h) as a dict; None for ops
// registered at run time (from Python, or a custom registry).
py::object RecordToPython(const ops::OpRecord* r) {
  if (r == nullptr) return py::none();
  py::dict d;
  d["family"] = r->family;
  d["record_file"] = r->record_file;
  d["rules_file"] = r->rules_file;
  d["origin"] = std::string(ops::OpOriginName(r->origin));
  py::list kernels;
  if (r->cpu_kernel) kernels.append("cpu");
  if (r->cuda_kernel) kernels.append("cuda");
  d["kernels"] = kernels;
  d["backward"] = std::string(ops::BackwardKindName(r->backward));
  // The candidates the rule appends after OneFlow's own list, or None.
  d["ours"] = r->ours.empty() ? py::object(py::none()) : py::object(py::str(r->ours));
  py::list names;
  for (const ops::OpAliasRecord& a : r->aliases) {
    py::dict ad;
    ad["name"] = a.name;
    py::list in;
    for (ops::Notation n : a.notations) in.append(std::string(ops::NotationName(n)));
    ad["in"] = in;
    py::dict renamed;
    for (const AliasAttr& x : a.renamed) renamed[py::str(x.name)] = x.op_name;
    ad["attrs"] = renamed;
    names.append(ad);
  }
  d["names"] = names;
  return std::move(d);
}

py::list Ops() {
  const OpRegistry& registry = SharedEngine().registry();
  py::list out;
  for (const std::string& name : registry.OpNames()) {
    std::shared_ptr<const OpDef> def = registry.Find(name);
    py::dict d;
    d["name"] = name;
    py::list ins, outs, attrs;
    for (const ArgDef& a : def->inputs()) {
      py::dict ad;
      ad["name"] = a.name;
      ad["variadic"] = a.variadic;
      ad["optional"] = a.optional;
      ad["mutable"] = a.is_mutable;
      ins.append(ad);
    }
    for (const ArgDef& a : def->outputs()) outs.append(a.name);
    for (const AttrDef& a : def->attrs()) {
      py::dict ad;
      ad["name"] = a.name;
      ad["type"] = std::string(AttrTypeName(a.type));
      ad["default"] = a.default_value ? AttrToPython(*a.default_value) : py::object(py::none());
      attrs.append(ad);
    }
    d["inputs"] = ins;
    d["outputs"] = outs;
    py::list aliases;
    for (const std::string& alias : registry.AliasesOf(name)) aliases.append(alias);
    d["aliases"] = aliases;
    d["extended_partials"] = static_cast<bool>(def->extended_sbp_fn());
    d["attrs"] = attrs;
    d["doc"] = def->doc();
    d["has_sbp_rule"] = !def->uses_broadcast_fallback();
    d["record"] = RecordToPython(ops::FindOpRecord(name));
    out.append(d);
  }
  return out;
}

}  // namespace

engine::Engine& SharedEngine() {
  // Never destroyed: rank threads and registered Python callbacks may
  // still refer to it while the interpreter shuts down.
  static engine::Engine* engine = [] {
    absl::StatusOr<std::unique_ptr<engine::Engine>> e = engine::Engine::Create();
    if (!e.ok()) throw std::runtime_error(std::string(e.status().message()));
    return e->release();
  }();
  return *engine;
}

void BindRules(py::module_& m) {
  m.def("canonical_sbp", [](const std::string& text) {
    return Unwrap(SbpParallel::Parse(text)).ToString();
  });
  m.def("canonical_nd_sbp", [](const std::string& text) {
    return ParseNdSbp(text, "sbp").ToString();
  });
  m.def("parse_placement", [](const std::string& text) {
    return PlacementInfo(ParsePlacement(text));
  });
  m.def("make_placement", [](const std::string& device, const std::vector<int64_t>& ranks,
                             const std::vector<int64_t>& hierarchy) {
    const DeviceType type = Unwrap(ParseDeviceType(device));
    return PlacementInfo(Unwrap(Placement::Make(type, ranks, hierarchy)));
  });
  m.def("infer", &Infer, py::arg("op"), py::arg("inputs"), py::arg("attrs"),
        py::arg("placement"), py::arg("cost"), py::arg("constraints"), py::arg("explain"));
  m.def("plan_boxing", &PlanBoxing, py::arg("shape"), py::arg("dtype"), py::arg("placement"),
        py::arg("src"), py::arg("dst"), py::arg("dst_placement") = std::nullopt);
  m.def("ops", &Ops);
  m.def("cost_policies", [] { return SharedEngine().CostPolicyNames(); });
  m.def("seeded_uniform", [](uint64_t seed, const std::string& name, int64_t n) {
    if (n < 0) throw py::value_error("seeded_uniform: n must be >= 0");
    SeededStream s(seed, name);
    std::vector<double> v(n);
    for (int64_t i = 0; i < n; ++i) v[i] = s.Next();
    return CopyToNumpy(DataType::kFloat64, {n}, v.data());
  });
  m.def("seeded_ints", [](uint64_t seed, const std::string& name, int64_t n, uint64_t bound) {
    if (bound == 0) throw py::value_error("seeded_ints: bound must be >= 1");
    if (n < 0) throw py::value_error("seeded_ints: n must be >= 0");
    SeededStream s(seed, name);
    std::vector<int64_t> v(n);
    for (int64_t i = 0; i < n; ++i) v[i] = static_cast<int64_t>(s.NextInt(bound));
    return CopyToNumpy(DataType::kInt64, {n}, v.data());
  });
}

}  // namespace oneflow_sbp::python
