#include "oneflow_sbp/inference/copy_cost.h"

#include <cstdint>
#include <limits>

#include "absl/strings/str_cat.h"
#include "oneflow_sbp/values/hierarchy_reduction.h"

namespace oneflow_sbp {

absl::string_view PartialPenaltyName(PartialPenalty penalty) {
  switch (penalty) {
    case PartialPenalty::kConstant: return "constant";
    case PartialPenalty::kProportional: return "proportional";
    case PartialPenalty::kForbidden: return "forbidden";
  }
  return "?";
}

absl::StatusOr<PartialPenalty> PartialPenaltyFromNumber(int64_t number) {
  switch (number) {
    case 1: return PartialPenalty::kConstant;
    case 2: return PartialPenalty::kProportional;
    case 3: return PartialPenalty::kForbidden;
    default:
      return absl::InvalidArgumentError(absl::StrCat(
          "partial_penalty_policy ", number,
          " is not 1 (constant 1.0), 2 (4*T*(np+nc), the default) or 3 (P forbidden)"));
  }
}

double OneFlow1DCopyCost(SbpParallel producer, SbpParallel consumer, double bytes) {
  if (producer == consumer) return 0;
  if (consumer.is_partial()) {
    return static_cast<double>(std::numeric_limits<int64_t>::max());  // 2^63
  }
  if (producer.is_broadcast() && consumer.is_split()) {
    return static_cast<double>(std::numeric_limits<int32_t>::max());
  }
  return bytes;
}

CopyCost PartialConsumerPenalty(double bytes, int64_t np, int64_t nc, PartialPenalty penalty) {
  switch (penalty) {
    case PartialPenalty::kConstant:
      return CopyCost(1.0);
    case PartialPenalty::kProportional:
      return CopyCost(4.0 * bytes * static_cast<double>(np + nc));
    case PartialPenalty::kForbidden:
      break;
  }
  return CopyCost::Unsupported();
}

CopyCost OneFlowAxisCost(SbpParallel a, SbpParallel b, double bytes, bool same_devices,
                         int64_t np, int64_t nc, PartialPenalty penalty) {
  if (same_devices && np == nc) {
    const double n = static_cast<double>(np);
    if (a == b) return CopyCost(0);
    // Partials of any kind (P(max), P(min) under `planned`) are priced as
    // OneFlow prices P: the collectives have the same traffic.
    if (b.is_partial()) return PartialConsumerPenalty(bytes, np, nc, penalty);
    if (a.is_broadcast()) return CopyCost(1.0);  // B -> S: a local slice
    if (a.is_split() && b.is_split()) return CopyCost(bytes * (n - 1) / n);
    if (a.is_partial() && b.is_broadcast()) return CopyCost(2 * bytes * (n - 1));
    return CopyCost(bytes * (n - 1));  // P -> S, S -> B
  }
  CopyCost cost(bytes);
  if (b.is_broadcast()) cost += CopyCost(static_cast<double>(nc - 1) * bytes);
  if (a.is_partial()) cost += CopyCost(static_cast<double>(np - 1) * bytes);
  if (b.is_partial()) cost += PartialConsumerPenalty(bytes, np, nc, penalty);
  return cost;
}

absl::StatusOr<CopyCost> OneFlowEagerNdCost(const NdSbp& in, const NdSbp& out,
                                            absl::Span<const int64_t> in_hierarchy,
                                            absl::Span<const int64_t> out_hierarchy,
                                            bool same_devices, const Shape& shape,
                                            double bytes, bool requires_same_sbp,
                                            PartialPenalty penalty) {
  if (in.empty() || out.empty() || in.any_unset() || out.any_unset()) {
    return absl::InvalidArgumentError(absl::StrCat(
        "copy cost of ", in.ToString(), " -> ", out.ToString(),
        ": nd_sbps must be non-empty with every entry set"));
  }
  // OneFlow first asks its eager boxing registry whether a path exists; on
  // one placement with >= 2 axes one always does, so that query is skipped.
  const InOutReduced r = InOutReduce(in_hierarchy, out_hierarchy, in, out, shape);
  const bool same_reduced_hierarchy = r.in_hierarchy == r.out_hierarchy;
  if (r.in == r.out && same_devices && same_reduced_hierarchy) return CopyCost(0);
  if (requires_same_sbp) return CopyCost::Unsupported();
  auto product = [](const Hierarchy& h) {
    int64_t p = 1;
    for (int64_t v : h) p *= v;
    return p;
  };
  const int64_t n_in = product(r.in_hierarchy);
  const int64_t n_out = product(r.out_hierarchy);
  if (r.in_hierarchy.size() == 1 && r.out_hierarchy.size() == 1) {
    return OneFlowAxisCost(r.in[0], r.out[0], bytes, same_devices, n_in, n_out, penalty);
  }
  CopyCost total(1.0);
  if (same_devices && same_reduced_hierarchy) {
    // OneFlow passes the TOTAL device count to every axis, not the axis size.
    bool same_dim_split_twice = false;
    for (int i = 0; i < r.in.size(); ++i) {
      const SbpParallel a = r.in[i];
      const SbpParallel b = r.out[i];
      total += OneFlowAxisCost(a, b, bytes, true, n_in, n_in, penalty);
      // A changing "to P" axis pays the penalty a second time (OneFlow);
      // P(max) -> P is such a change too.
      if (b.is_partial() && a != b) {
        total += PartialConsumerPenalty(bytes, n_in, n_out, penalty);
      }
      if (!same_dim_split_twice && a.is_split() && a == b) {
        for (int j = 0; j < i; ++j) {
          if (r.in[j] != r.out[j] && (r.in[j] == a || r.out[j] == a)) {
            same_dim_split_twice = true;
            break;
          }
        }
      }
    }
    if (same_dim_split_twice) total += CopyCost(bytes);
  } else {
    double in_partial = 1;
    for (int i = 0; i < r.in.size(); ++i) {
      if (r.in[i].is_partial()) in_partial *= static_cast<double>(r.in_hierarchy[i]);
    }
    total += CopyCost(bytes * in_partial);
    double out_broadcast = 1;
    for (int i = 0; i < r.out.size(); ++i) {
      if (r.out[i].is_partial()) {
        total += PartialConsumerPenalty(bytes, n_in, n_out, penalty);
      }
      if (r.out[i].is_broadcast()) out_broadcast *= static_cast<double>(r.out_hierarchy[i]);
    }
    total += CopyCost(bytes * out_broadcast);
  }
  return total;
}

}  // namespace oneflow_sbp
