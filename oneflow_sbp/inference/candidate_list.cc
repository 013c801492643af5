#include "oneflow_sbp/inference/candidate_list.h"

#include "absl/strings/str_cat.h"
#include "oneflow_sbp/rule_api/sbp_context.h"

namespace oneflow_sbp {

bool IsSplittable(const Shape& shape, const NdSbp& nd_sbp,
                  absl::Span<const int64_t> hierarchy) {
  // Only split dims change, so track those (at most one per mesh axis)
  // instead of copying the whole shape: this runs once per candidate and
  // blob of every cold inference.
  int split_dims[NdSbp::kMaxAxes];
  int64_t extents[NdSbp::kMaxAxes];
  int tracked = 0;
  for (size_t i = 0; i < hierarchy.size(); ++i) {
    const SbpParallel s = nd_sbp[static_cast<int>(i)];
    if (!s.is_split()) continue;
    const int a = s.split_axis();
    if (a >= shape.rank()) return false;
    int j = 0;
    while (j < tracked && split_dims[j] != a) ++j;
    if (j == tracked) {
      split_dims[j] = a;
      extents[j] = shape.dim(a);
      ++tracked;
    }
    if (extents[j] < hierarchy[i]) return false;
    extents[j] /= hierarchy[i];
  }
  return true;
}

absl::StatusOr<std::vector<SbpSignature>> GetSbpCandidates(
    const OpCall& call, absl::Span<const TensorDesc> input_descs,
    absl::Span<const TensorDesc> output_descs, int64_t hierarchy_value,
    int64_t parallel_num, DeviceType device_type, CandidateSet set) {
  const std::string& op = call.type_name();
  std::vector<SbpSignature> list;
  const bool extended = set == CandidateSet::kExtended && call.def().extended_sbp_fn();
  if (call.def().get_sbp_fn() || extended) {
    SbpContext ctx(call, input_descs, output_descs, hierarchy_value, parallel_num,
                   device_type);
    absl::Status s =
        call.def().get_sbp_fn() ? call.def().get_sbp_fn()(ctx) : absl::OkStatus();
    if (s.ok()) s = ctx.status();
    if (s.ok() && extended) s = call.def().extended_sbp_fn()(ctx);
    if (s.ok()) s = ctx.status();
    if (!s.ok()) {
      return absl::Status(s.code(), absl::StrCat(op, ": sbp rule: ", s.message()));
    }
    // The extended rule runs after the rule's own list, so OneFlow's are
    // still the prefix it marked.
    const size_t oneflow_count = ctx.oneflow_candidate_count();
    list = std::move(ctx.candidates());
    if (set == CandidateSet::kOneFlow) list.resize(oneflow_count);
  }
  for (size_t k = 0; k < list.size(); ++k) {
    for (int b = 0; b < call.num_blobs(); ++b) {
      const SbpParallel s = list[k][b];
      if (s.is_unset()) {
        return absl::InternalError(absl::StrCat(
            op, ": sbp rule candidate #", k, " (", SignatureToString(call, list[k]),
            ") has NOT set sbp for ", call.bn(b)));
      }
      const TensorDesc& d = b < call.num_inputs() ? input_descs[b]
                                                  : output_descs[b - call.num_inputs()];
      if (s.is_split() && s.split_axis() >= d.shape.rank()) {
        return absl::InternalError(absl::StrCat(
            op, ": sbp rule candidate #", k, " (", SignatureToString(call, list[k]),
            ") splits ", call.bn(b), " ", d.ToString(), " on dim ", s.split_axis()));
      }
    }
  }
  return list;
}

}  // namespace oneflow_sbp
