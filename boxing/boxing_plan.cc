#include "boxing/boxing_plan.h"

#include <algorithm>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "boxing/byte_count.h"

namespace oneflow_sbp::boxing {

absl::string_view StepKindName(StepKind kind) {
  switch (kind) {
    case StepKind::kAllGather: return "all_gather";
    case StepKind::kReduceScatter: return "reduce_scatter";
    case StepKind::kAllReduce: return "all_reduce";
    case StepKind::kAllToAll: return "all_to_all";
    case StepKind::kLocalSlice: return "local_slice";
    case StepKind::kLocalPartial: return "local_b_to_p";
    case StepKind::kLocalScatter: return "local_s_to_p";
    case StepKind::kPointToPoint: return "p2p";
  }
  return "?";
}

bool IsLocal(StepKind kind) {
  return kind == StepKind::kLocalSlice || kind == StepKind::kLocalPartial ||
         kind == StepKind::kLocalScatter;
}

int64_t BoxingStep::max_rank_bytes() const {
  int64_t m = 0;
  for (size_t i = 0; i < bytes_sent.size(); ++i) {
    m = std::max({m, bytes_sent[i], bytes_received[i]});
  }
  return m;
}

int64_t BoxingStep::total_bytes() const {
  int64_t t = 0;
  for (int64_t b : bytes_received) t = AddBytes(t, b);
  return t;
}

double BoxingPlan::time_s() const {
  double t = 0;
  for (const BoxingStep& s : steps) t += s.time_s;
  return t;
}

int64_t BoxingPlan::total_bytes() const {
  int64_t t = 0;
  for (const BoxingStep& s : steps) t = AddBytes(t, s.total_bytes());
  return t;
}

int64_t BoxingPlan::max_rank_bytes() const {
  std::vector<int64_t> per_rank(ranks.size(), 0);
  for (const BoxingStep& s : steps) {
    for (size_t i = 0; i < per_rank.size() && i < s.bytes_received.size(); ++i) {
      per_rank[i] = AddBytes(per_rank[i], s.bytes_received[i]);
    }
  }
  return per_rank.empty() ? 0 : *std::max_element(per_rank.begin(), per_rank.end());
}

int BoxingPlan::num_comm_steps() const {
  int n = 0;
  for (const BoxingStep& s : steps) n += IsLocal(s.kind) ? 0 : 1;
  return n;
}

std::string BoxingPlan::Summary() const {
  if (steps.empty()) return "no-op";
  std::vector<std::string> parts;
  for (const BoxingStep& s : steps) {
    if (s.kind == StepKind::kPointToPoint) {
      parts.push_back(absl::StrCat("p2p->", s.result.ToLongString()));
      continue;
    }
    std::vector<int> axes;
    for (int i = 0; i < NdSbp::kMaxAxes; ++i) {
      if (s.axes & AxisBit(i)) axes.push_back(i);
    }
    parts.push_back(absl::StrCat(StepKindName(s.kind), "[", absl::StrJoin(axes, ","), "] ",
                                 s.from.ToString(), "->", s.to.ToString()));
  }
  return absl::StrJoin(parts, " ; ");
}

absl::Status CheckPlanBytes(const BoxingPlan& plan) {
  bool saturated = plan.total_bytes() >= kSaturatedBytes;
  for (const BoxingStep& s : plan.steps) {
    // A rank's sent bytes are not part of total_bytes(); check them too.
    saturated = saturated || s.max_rank_bytes() >= kSaturatedBytes;
  }
  if (!saturated) return absl::OkStatus();
  return absl::OutOfRangeError(absl::StrCat(
      "boxing ", DataTypeName(plan.dtype), plan.shape.ToString(), " from ", plan.src.ToString(),
      " on ", plan.src_placement.ToString(), " to ", plan.dst.ToString(), " on ",
      plan.dst_placement.ToString(), ": the plan's byte counts overflow int64 (more than ",
      kSaturatedBytes, " bytes); use a smaller tensor"));
}

}  // namespace oneflow_sbp::boxing
