#include "io/program_proto.h"

#include <cmath>
#include <map>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "google/protobuf/struct.pb.h"
#include "oneflow_sbp/values/data_type.h"
#include "io/proto_io.h"
#include "oneflow_sbp/values/quoted_input.h"
#include "oneflow_sbp/rule_api/sbp_signature.h"
#include "oneflow_sbp/values/status_macros.h"

namespace oneflow_sbp::io {
namespace {

using google::protobuf::Value;

absl::Status Bad(absl::string_view where, absl::string_view why) {
  return absl::InvalidArgumentError(absl::StrCat("program: ", where, ": ", why));
}

std::string ValueText(const Value& v) {
  std::string json = ToJson(v);
  return json.empty() ? "null" : json;
}

absl::StatusOr<int64_t> Integer(const Value& v) {
  if (v.kind_case() != Value::kNumberValue || v.number_value() != std::floor(v.number_value()) ||
      std::fabs(v.number_value()) > 9007199254740992.0) {
    return absl::InvalidArgumentError("not an integer");
  }
  return static_cast<int64_t>(v.number_value());
}

// A JSON value as an attribute of the declared type. Strings are parsed as
// on the command line ("1,0,2" for ints), so either form works.
absl::StatusOr<AttrValue> ToAttr(const Value& v, AttrType type) {
  if (v.kind_case() == Value::kStringValue) return ParseAttrValue(type, v.string_value());
  switch (type) {
    case AttrType::kInt: {
      absl::StatusOr<int64_t> i = Integer(v);
      if (i.ok()) return AttrValue(*i);
      break;
    }
    case AttrType::kFloat:
      if (v.kind_case() == Value::kNumberValue) return AttrValue(v.number_value());
      break;
    case AttrType::kBool:
      if (v.kind_case() == Value::kBoolValue) return AttrValue(v.bool_value());
      break;
    case AttrType::kString:
      break;
    case AttrType::kInts:
      if (v.kind_case() == Value::kListValue) {
        std::vector<int64_t> ints;
        for (const Value& e : v.list_value().values()) {
          absl::StatusOr<int64_t> i = Integer(e);
          if (!i.ok()) break;
          ints.push_back(*i);
        }
        if (static_cast<int>(ints.size()) == v.list_value().values_size()) return AttrValue(ints);
      }
      break;
  }
  return absl::InvalidArgumentError(absl::StrCat("expected ", AttrTypeName(type), ", got ",
                                                 ValueText(v)));
}

// Without a declaration (OpCall::Make then names the attribute as unknown).
AttrValue GuessAttr(const Value& v) {
  switch (v.kind_case()) {
    case Value::kBoolValue: return AttrValue(v.bool_value());
    case Value::kStringValue: return AttrValue(v.string_value());
    case Value::kNumberValue: {
      absl::StatusOr<int64_t> i = Integer(v);
      return i.ok() ? AttrValue(*i) : AttrValue(v.number_value());
    }
    default: return AttrValue(ValueText(v));
  }
}

absl::StatusOr<Placement> ProgramPlacement(const oneflow::ProgramProto& proto,
                                           absl::Span<const int64_t> mesh) {
  if (!proto.has_placement()) {
    return Bad("placement", "missing; e.g. \"placement\": \"cpu:0-3 [2,2]\"");
  }
  absl::StatusOr<Placement> placement = Placement::Parse(proto.placement());
  if (!placement.ok()) return Bad("placement", placement.status().message());
  if (mesh.empty()) return placement;
  // The rank count is checked as it is multiplied, before any rank list
  // is built: "--mesh=4000000000" must not allocate 32 GB first.
  int64_t n = 1;
  for (int64_t m : mesh) {
    if (m < 1) return Bad("mesh", absl::StrCat("extent ", m, " must be >= 1"));
    if (m > Placement::kMaxParallelNum / n) {
      return Bad("mesh", absl::StrCat("[", absl::StrJoin(mesh, ","), "] has more than ",
                                      Placement::kMaxParallelNum,
                                      " ranks, the most a placement has"));
    }
    n *= m;
  }
  std::vector<int64_t> ranks(placement->ranks().begin(), placement->ranks().end());
  if (n != placement->parallel_num()) {
    ranks.clear();
    for (int64_t r = 0; r < n; ++r) ranks.push_back(r);
  }
  absl::StatusOr<Placement> out = Placement::Make(placement->device_type(), ranks, mesh);
  if (!out.ok()) return Bad("mesh", out.status().message());
  return out;
}

}  // namespace

absl::StatusOr<graph::Program> ProgramFromProto(const oneflow::ProgramProto& proto,
                                                const OpRegistry& registry,
                                                absl::Span<const int64_t> mesh) {
  OFS_ASSIGN_OR_RETURN(Placement placement, ProgramPlacement(proto, mesh));
  graph::ProgramBuilder b(registry, placement);
  for (int i = 0; i < proto.tensors_size(); ++i) {
    const oneflow::ProgramTensorProto& t = proto.tensors(i);
    if (t.name().empty()) return Bad(absl::StrCat("tensors[", i, "]"), "has no \"name\"");
    const std::string where = absl::StrCat("tensor ", QuotedInput(t.name()));
    absl::StatusOr<Shape> shape = Shape::Make(std::vector<int64_t>(t.shape().begin(), t.shape().end()));
    if (!shape.ok()) return Bad(where, absl::StrCat("shape: ", shape.status().message()));
    absl::StatusOr<DataType> dtype = ParseDataType(t.has_dtype() ? t.dtype() : "f32");
    if (!dtype.ok()) return Bad(where, absl::StrCat("dtype: ", dtype.status().message()));
    TensorDesc desc{*shape, *dtype};
    absl::Status s;
    if (t.has_nd_sbp()) {
      absl::StatusOr<NdSbp> nd = NdSbp::Parse(t.nd_sbp());
      if (!nd.ok()) return Bad(where, absl::StrCat("nd_sbp: ", nd.status().message()));
      // Replicated means replicated on any mesh: an imported model's inputs
      // (written as B on the import placement) keep meaning that when
      // --mesh or --placement moves the program to a mesh of more axes.
      if (nd->all_broadcast() && nd->size() != placement.num_axes()) {
        *nd = NdSbp::Repeat(SbpParallel::Broadcast(), placement.num_axes());
      }
      s = b.AddInput(t.name(), desc, *nd, t.parameter());
    } else {
      s = b.AddParameter(t.name(), desc);
    }
    OFS_RETURN_IF_ERROR(s);
  }
  for (int i = 0; i < proto.ops_size(); ++i) {
    const oneflow::ProgramOpProto& op = proto.ops(i);
    const std::string label =
        op.name().empty() ? absl::StrCat("op ", i, " (", UnquotedInput(op.op()), ")") : op.name();
    if (op.op().empty()) return Bad(UnquotedInput(label), "has no \"op\" (the op type, e.g. \"matmul\")");
    std::shared_ptr<const OpDef> def = registry.Find(op.op());
    if (def == nullptr) {
      return Bad(UnquotedInput(label), registry.Get(op.op()).status().message());
    }
    AttrMap attrs;
    // Sorted, so the first bad attribute reported does not depend on hashing.
    std::map<std::string, Value> sorted(op.attrs().begin(), op.attrs().end());
    for (const auto& [name, value] : sorted) {
      const AttrDef* decl = def->FindAttr(name);
      if (decl == nullptr) {
        attrs.Set(name, GuessAttr(value));
        continue;
      }
      absl::StatusOr<AttrValue> v = ToAttr(value, decl->type);
      if (!v.ok()) return Bad(UnquotedInput(label), absl::StrCat("attribute ", QuotedInput(name), ": ", v.status().message()));
      attrs.Set(name, *std::move(v));
    }
    absl::Status s = b.AddOp(op.op(), std::vector<std::string>(op.inputs().begin(), op.inputs().end()),
                             std::vector<std::string>(op.outputs().begin(), op.outputs().end()),
                             attrs, label);
    if (!s.ok()) return absl::InvalidArgumentError(absl::StrCat("program: ", s.message()));
  }
  for (int i = 0; i < proto.outputs_size(); ++i) {
    const oneflow::ProgramOutputProto& o = proto.outputs(i);
    std::optional<NdSbp> nd;
    if (o.has_nd_sbp()) {
      absl::StatusOr<NdSbp> parsed = NdSbp::Parse(o.nd_sbp());
      if (!parsed.ok()) {
        return Bad(absl::StrCat("output ", QuotedInput(o.name())),
                   absl::StrCat("nd_sbp: ", parsed.status().message()));
      }
      nd = *parsed;
    }
    absl::Status s = b.MarkOutput(o.name(), nd);
    OFS_RETURN_IF_ERROR(s);
  }
  return std::move(b).Build();
}

absl::StatusOr<oneflow::ProgramProto> ProgramProtoFromJson(absl::string_view json) {
  oneflow::ProgramProto proto;
  absl::Status s = FromJson(json, &proto);
  if (!s.ok()) return absl::InvalidArgumentError(absl::StrCat("program: ", s.message()));
  return proto;
}

absl::StatusOr<graph::Program> ProgramFromJson(absl::string_view json, const OpRegistry& registry,
                                               absl::Span<const int64_t> mesh) {
  OFS_ASSIGN_OR_RETURN(oneflow::ProgramProto proto, ProgramProtoFromJson(json));
  return ProgramFromProto(proto, registry, mesh);
}

namespace {

void FillTotals(const graph::ProgramCosts& c, oneflow::PlanTotalsProto* t) {
  t->set_total_time_s(c.total_time_s);
  t->set_comm_time_s(c.comm_time_s);
  t->set_comm_bytes(c.comm_bytes);
  t->set_compute_time_s(c.compute_time_s);
  t->set_peak_memory_bytes(c.peak_memory_bytes);
}

void FillStepMemory(const graph::StepMemory& m, oneflow::StepMemoryProto* p) {
  p->set_inputs(m.of(graph::StepTensorKind::kInput));
  p->set_parameters(m.of(graph::StepTensorKind::kParameter));
  p->set_gradients(m.of(graph::StepTensorKind::kGradient));
  p->set_optimizer_state(m.of(graph::StepTensorKind::kOptimizerState));
  p->set_activations(m.of(graph::StepTensorKind::kActivation));
}

}  // namespace

oneflow::PlanTrainingProto TrainingPlanToProto(const graph::TrainingStepInfo& step,
                                               const graph::ProgramPlan& plan) {
  const graph::Program& program = step.program;
  oneflow::PlanTrainingProto out;
  out.set_forward_ops(step.num_forward_ops);
  out.set_backward_ops(step.num_backward_ops);
  int updates = 0;
  for (const graph::TrainingStepInfo::Parameter& p : step.parameters) updates += p.update_op >= 0;
  out.set_update_ops(updates);
  out.set_loss(program.tensors()[step.loss].name);
  FillStepMemory(graph::StepMemoryPerRank(program, plan.chosen, step.kinds), out.mutable_memory());
  FillStepMemory(graph::StepMemoryPerRank(program, plan.greedy, step.kinds),
                 out.mutable_greedy_memory());
  const graph::StrategyReport chosen = graph::ClassifyStrategy(step, plan.chosen);
  out.set_strategy(chosen.name);
  for (const std::string& a : chosen.per_axis) out.add_strategy_per_axis(a);
  out.set_greedy_strategy(graph::ClassifyStrategy(step, plan.greedy).name);
  return out;
}

oneflow::ProgramPlanProto ProgramPlanToProto(const graph::Program& program,
                                             const graph::ProgramPlan& plan) {
  oneflow::ProgramPlanProto out;
  out.set_placement(program.placement().ToString());
  out.set_total_time_s(plan.costs.total_time_s);
  out.set_greedy_total_time_s(plan.greedy_costs.total_time_s);
  FillTotals(plan.costs, out.mutable_totals());
  FillTotals(plan.greedy_costs, out.mutable_greedy());
  const std::vector<NdSbp> chosen = graph::TensorLayouts(program, plan.chosen);
  const std::vector<NdSbp> greedy = graph::TensorLayouts(program, plan.greedy);
  for (size_t t = 0; t < program.tensors().size(); ++t) {
    const graph::ProgramTensor& tensor = program.tensors()[t];
    oneflow::PlanTensorProto& p = (*out.mutable_tensors())[tensor.name];
    p.set_role(std::string(graph::TensorRoleName(tensor.role)));
    p.set_tensor(tensor.desc.ToString());
    p.set_nd_sbp(chosen[t].ToString());
    p.set_greedy_nd_sbp(greedy[t].ToString());
  }
  for (size_t i = 0; i < program.ops().size(); ++i) {
    const graph::ProgramOp& op = program.ops()[i];
    oneflow::PlanOpProto* p = out.add_ops();
    p->set_name(op.label);
    p->set_op(op.call->type_name());
    p->set_nd_sbp_signature(SignatureToString(*op.call, plan.chosen.op_signatures[i]));
    p->set_greedy_nd_sbp_signature(SignatureToString(*op.call, plan.greedy.op_signatures[i]));
    p->set_compute_time_s(plan.costs.op_work[i].time_s);
    p->set_num_candidates(plan.num_candidates[i]);
  }
  for (const graph::BoxingEdge& e : plan.costs.edges) {
    const graph::ProgramTensor& tensor = program.tensors()[e.tensor];
    oneflow::PlanEdgeProto* p = out.add_edges();
    p->set_tensor(tensor.name);
    p->set_producer(tensor.producer >= 0 ? program.ops()[tensor.producer].label : "");
    if (e.consumer >= 0) {
      const graph::ProgramOp& op = program.ops()[e.consumer];
      p->set_consumer(op.label);
      p->set_blob(op.call->bn(e.blob));
    } else {
      p->set_blob("output");
    }
    p->set_from_nd_sbp(e.from.ToString());
    p->set_to_nd_sbp(e.to.ToString());
    p->set_boxing(e.price.summary);
    p->set_time_s(e.price.time_s);
    p->set_bytes(e.price.bytes);
  }
  oneflow::PlanSolverProto* s = out.mutable_solver();
  s->set_nodes(plan.stats.nodes);
  s->set_edges(plan.stats.edges);
  s->set_eliminated_leaves(plan.stats.reduction.leaves);
  s->set_eliminated_chains(plan.stats.reduction.chains);
  s->set_isolated(plan.stats.reduction.isolated);
  s->set_core_nodes(plan.stats.core_nodes);
  s->set_core_product(plan.stats.core_product);
  s->set_exact(plan.stats.exact);
  s->set_seconds(plan.seconds);
  s->set_memory_price_s_per_byte(plan.memory_price_s_per_byte);
  s->set_greedy_candidates_added(plan.greedy_candidates_added);
  s->set_boxing_plans(plan.boxing_plans);
  s->set_boxing_plans_without_exchanges(plan.boxing_plans_without_exchanges);
  return out;
}

}  // namespace oneflow_sbp::io