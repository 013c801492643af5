#include "io/boxing_plan_format.h"

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_join.h"
#include "io/proto_convert.h"

namespace oneflow_sbp::io {
namespace {

std::vector<int> AxesOf(MeshAxisMask m) {
  std::vector<int> axes;
  for (int i = 0; i < NdSbp::kMaxAxes; ++i) {
    if (m & AxisBit(i)) axes.push_back(i);
  }
  return axes;
}

std::string Micros(double seconds) { return absl::StrFormat("%.3f us", seconds * 1e6); }

std::string StepTitle(const boxing::BoxingStep& s) {
  if (s.kind == boxing::StepKind::kPointToPoint) return "p2p exchange";
  const std::vector<int> axes = AxesOf(s.axes);
  return absl::StrCat(boxing::StepKindName(s.kind), axes.size() > 1 ? " on mesh axes " : " on mesh axis ",
                      absl::StrJoin(axes, ","), ", ", s.from.ToString(), " -> ",
                      s.to.ToString());
}

const Placement& ResultPlacement(const boxing::BoxingPlan& plan, const boxing::BoxingStep& s) {
  return s.on_destination ? plan.dst_placement : plan.src_placement;
}

}  // namespace

oneflow::BoxingPlanProto PlanToProto(const boxing::BoxingPlan& plan, const boxing::BoxingPlan* naive) {
  oneflow::BoxingPlanProto p;
  *p.mutable_shape() = ToProto(plan.shape);
  p.set_data_type(io::ToProto(plan.dtype));
  p.set_src_placement(plan.src_placement.ToString());
  p.set_dst_placement(plan.dst_placement.ToString());
  *p.mutable_src_parallel_conf() = ToProto(plan.src_placement);
  *p.mutable_dst_parallel_conf() = ToProto(plan.dst_placement);
  *p.mutable_src_nd_sbp() = ToProto(plan.src);
  *p.mutable_dst_nd_sbp() = ToProto(plan.dst);
  p.set_src_nd_sbp_str(plan.src.ToString());
  p.set_dst_nd_sbp_str(plan.dst.ToString());
  for (int64_t r : plan.ranks) p.add_ranks(r);
  for (const boxing::BoxingStep& s : plan.steps) {
    oneflow::BoxingStepProto* sp = p.add_steps();
    sp->set_kind(std::string(boxing::StepKindName(s.kind)));
    for (int a : AxesOf(s.axes)) sp->add_mesh_axes(a);
    if (s.kind != boxing::StepKind::kPointToPoint) {
      sp->set_from(s.from.ToString());
      sp->set_to(s.to.ToString());
    }
    for (const std::vector<int64_t>& g : s.groups) {
      oneflow::RankGroupProto* gp = sp->add_groups();
      for (int64_t r : g) gp->add_rank(r);
    }
    for (int64_t b : s.bytes_sent) sp->add_bytes_sent(b);
    for (int64_t b : s.bytes_received) sp->add_bytes_received(b);
    *sp->mutable_result_nd_sbp() = ToProto(s.result);
    sp->set_result_nd_sbp_str(s.result.ToString());
    sp->set_placement(ResultPlacement(plan, s).ToString());
    sp->set_time_s(s.time_s);
  }
  p.set_total_bytes(plan.total_bytes());
  p.set_max_rank_bytes(plan.max_rank_bytes());
  p.set_time_s(plan.time_s());
  p.set_summary(plan.Summary());
  if (naive != nullptr) {
    p.set_naive_time_s(naive->time_s());
    p.set_naive_total_bytes(naive->total_bytes());
    p.set_naive_summary(naive->Summary());
  }
  return p;
}

std::string PlanToText(const boxing::BoxingPlan& plan, const boxing::BoxingPlan* naive) {
  const int64_t bytes = plan.shape.elem_cnt() * ByteSizeOf(plan.dtype);
  std::string out = absl::StrCat(
      DataTypeName(plan.dtype), plan.shape.ToString(), " (", bytes, " bytes): ",
      plan.src.ToString(), " on ", plan.src_placement.ToString(), " -> ", plan.dst.ToString(),
      " on ", plan.dst_placement.ToString(), "\n");
  if (plan.steps.empty()) absl::StrAppend(&out, "no boxing needed\n");
  for (size_t i = 0; i < plan.steps.size(); ++i) {
    const boxing::BoxingStep& s = plan.steps[i];
    absl::StrAppend(&out, "step ", i + 1, ": ", StepTitle(s), " -> ", s.result.ToString(),
                    " on ", ResultPlacement(plan, s).ToString(), "\n");
    std::vector<std::string> groups;
    for (const std::vector<int64_t>& g : s.groups) {
      groups.push_back(absl::StrCat("{", absl::StrJoin(g, ","), "}"));
    }
    absl::StrAppend(&out, "  groups ", absl::StrJoin(groups, " "), "\n");
    if (boxing::IsLocal(s.kind)) {
      absl::StrAppend(&out, "  local: no bytes move\n");
      continue;
    }
    std::vector<std::string> per_rank;
    for (size_t r = 0; r < plan.ranks.size(); ++r) {
      if (s.bytes_sent[r] == 0 && s.bytes_received[r] == 0) continue;
      per_rank.push_back(absl::StrCat("r", plan.ranks[r], " ", s.bytes_received[r], "/",
                                      s.bytes_sent[r]));
    }
    absl::StrAppend(&out, "  bytes received/sent: ", absl::StrJoin(per_rank, ", "), "\n");
    absl::StrAppend(&out, "  max per rank ", s.max_rank_bytes(), " B, ", Micros(s.time_s), "\n");
  }
  absl::StrAppend(&out, "total: ", plan.steps.size(), " step", plan.steps.size() == 1 ? "" : "s",
                  " (", plan.num_comm_steps(), " communicating), ", plan.total_bytes(),
                  " bytes received in all, max ", plan.max_rank_bytes(), " per rank, ",
                  Micros(plan.time_s()), "\n");
  if (naive != nullptr) {
    absl::StrAppend(&out, "naive per-axis plan: ", naive->Summary(), ": ",
                    naive->total_bytes(), " bytes, ", Micros(naive->time_s()), "\n");
  }
  return out;
}

std::string PlanToGraphviz(const boxing::BoxingPlan& plan) {
  std::string out = "digraph boxing {\n  rankdir=LR;\n  node [shape=box];\n";
  auto node = [&](int i, const NdSbp& nd, const Placement& p) {
    absl::StrAppend(&out, "  n", i, " [label=\"", nd.ToString(), "\\n", p.ToString(), "\"];\n");
  };
  node(0, plan.src, plan.src_placement);
  for (size_t i = 0; i < plan.steps.size(); ++i) {
    const boxing::BoxingStep& s = plan.steps[i];
    node(static_cast<int>(i) + 1, s.result, ResultPlacement(plan, s));
    absl::StrAppend(&out, "  n", i, " -> n", i + 1, " [label=\"", StepTitle(s), "\\n",
                    s.total_bytes(), " B, ", Micros(s.time_s), "\"];\n");
  }
  absl::StrAppend(&out, "  label=\"", plan.total_bytes(), " bytes, ", Micros(plan.time_s()),
                  "\";\n}\n");
  return out;
}

}  // namespace oneflow_sbp::io