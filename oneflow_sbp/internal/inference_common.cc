#include "oneflow_sbp/internal/inference_common.h"

#include <algorithm>
#include <utility>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "oneflow_sbp/candidate_list.h"
#include "oneflow_sbp/nd_candidate_context.h"
#include "oneflow_sbp/signature_inference.h"
#include "oneflow_sbp/tensor_slice_view.h"

namespace oneflow_sbp::internal {

const TensorDesc& BlobDesc(const Prepared& p, int blob) {
  const int n = static_cast<int>(p.input_descs.size());
  return blob < n ? p.input_descs[blob] : p.output_descs[blob - n];
}

absl::StatusOr<Prepared> Prepare(const InferRequest& req) {
  if (req.op == nullptr) {
    return absl::InvalidArgumentError("inference request names no op");
  }
  const OpCall& call = *req.op;
  const std::string& op = call.type_name();
  if (static_cast<int>(req.inputs.size()) != call.num_inputs()) {
    std::vector<std::string> bns;
    for (int b = 0; b < call.num_inputs(); ++b) bns.push_back(call.bn(b));
    return absl::InvalidArgumentError(absl::StrCat(
        op, " expects ", call.num_inputs(), " input", call.num_inputs() == 1 ? "" : "s",
        " (", absl::StrJoin(bns, ", "), "), got ", req.inputs.size()));
  }
  Prepared p;
  p.call = &call;
  const absl::Span<const int64_t> h = req.placement.hierarchy();
  for (int b = 0; b < call.num_inputs(); ++b) {
    const InferInput& in = req.inputs[b];
    absl::Status s = ValidateNdSbp(in.nd_sbp(), in.desc().shape, h);
    if (!s.ok()) {
      return absl::InvalidArgumentError(
          absl::StrCat(op, ": input ", call.bn(b), " ", in.desc().ToString(), ": ",
                       s.message()));
    }
    p.input_descs.push_back(in.desc());
  }
  absl::StatusOr<std::vector<TensorDesc>> outs = call.InferOutputDescs(p.input_descs);
  if (!outs.ok()) return outs.status();
  p.output_descs = *std::move(outs);

  if (!req.constraints.empty()) {
    if (static_cast<int>(req.constraints.size()) != call.num_blobs()) {
      return absl::InvalidArgumentError(absl::StrCat(
          op, ": ", req.constraints.size(), " constraint slots for ",
          call.num_blobs(), " blobs"));
    }
    p.constraints = req.constraints;
    for (int b = 0; b < call.num_blobs(); ++b) {
      const std::optional<NdSbp>& c = p.constraints[b];
      if (!c) continue;
      if (c->size() != static_cast<int>(h.size())) {
        return absl::InvalidArgumentError(absl::StrCat(
            op, ": constraint on ", call.bn(b), " ", c->ToString(), " has ",
            c->size(), " entries but placement ", req.placement.ToString(),
            " has ", h.size(), " mesh axes"));
      }
      const Shape& shape = BlobDesc(p, b).shape;
      for (int i = 0; i < c->size(); ++i) {
        const SbpParallel s = (*c)[i];
        if (s.is_split() && s.split_axis() >= shape.rank()) {
          return absl::InvalidArgumentError(absl::StrCat(
              op, ": constraint on ", call.bn(b), " ", c->ToString(), " splits dim ",
              s.split_axis(), " but ", BlobDesc(p, b).ToString(), " has rank ",
              shape.rank()));
        }
        if (!s.is_unset()) p.has_constraints = true;
      }
    }
  }
  return p;
}

SbpSignature AllBroadcast(int num_blobs) {
  return SbpSignature(num_blobs, SbpParallel::Broadcast());
}

// Constraint check for one blob of a 1-D candidate or one NdSbp.
bool MatchesConstraint(const NdSbp& value, const NdSbp& constraint) {
  for (int i = 0; i < constraint.size(); ++i) {
    if (!constraint[i].is_unset() && constraint[i] != value[i]) return false;
  }
  return true;
}

std::string ConstraintsToString(const Prepared& p) {
  std::vector<std::string> parts;
  for (int b = 0; b < p.call->num_blobs(); ++b) {
    if (p.constraints.empty() || !p.constraints[b]) continue;
    parts.push_back(absl::StrCat(p.call->bn(b), ":", CompactNdSbpString(*p.constraints[b])));
  }
  return absl::StrJoin(parts, " ");
}

InferResult NewResult(const OpCall& call, size_t num_candidates) {
  InferResult result;
  result.used_broadcast_fallback = call.def().uses_broadcast_fallback();
  result.num_candidates = static_cast<int>(num_candidates);
  return result;
}

std::vector<CandidateRecord> NewRecords(const std::vector<NdSbpSignature>& list, bool explain) {
  std::vector<CandidateRecord> records(explain ? list.size() : 0);
  for (size_t k = 0; k < records.size(); ++k) {
    records[k].signature = list[k];
    records[k].emission_index = static_cast<int>(k);
  }
  return records;
}

absl::StatusOr<std::vector<NdSbpSignature>> NdCandidates(const InferRequest& req,
                                                         const Prepared& p,
                                                         bool dedup_lists) {
  const OpCall& call = *p.call;
  const std::string& op = call.type_name();
  const absl::Span<const int64_t> h = req.placement.hierarchy();
  const int64_t n = req.placement.parallel_num();
  const int axes = static_cast<int>(h.size());

  std::vector<std::pair<int64_t, std::vector<SbpSignature>>> lists;
  std::vector<const std::vector<SbpSignature>*> per_axis(axes);
  for (int i = 0; i < axes; ++i) {
    auto it = std::find_if(lists.begin(), lists.end(),
                           [&](const auto& e) { return e.first == h[i]; });
    if (it == lists.end()) {
      absl::StatusOr<std::vector<SbpSignature>> l = GetSbpCandidates(
          call, p.input_descs, p.output_descs, h[i], n, req.placement.device_type());
      if (!l.ok()) return l.status();
      l->push_back(AllBroadcast(call.num_blobs()));
      if (dedup_lists) {
        std::vector<SbpSignature> unique;
        for (SbpSignature& sig : *l) {
          if (std::find(unique.begin(), unique.end(), sig) == unique.end()) {
            unique.push_back(std::move(sig));
          }
        }
        *l = std::move(unique);
      }
      lists.emplace_back(h[i], *std::move(l));
    }
  }
  for (int i = 0; i < axes; ++i) {
    for (const auto& e : lists) {
      if (e.first == h[i]) per_axis[i] = &e.second;
    }
  }
  int64_t total = 1;
  for (int i = 0; i < axes; ++i) {
    total *= static_cast<int64_t>(per_axis[i]->size());
    if (total > kMaxNdCandidates) {
      return absl::ResourceExhaustedError(absl::StrCat(
          op, ": the N-D candidate product on hierarchy [", absl::StrJoin(h, ","),
          "] exceeds ", kMaxNdCandidates, " signatures"));
    }
  }
  std::vector<NdSbpSignature> list(total, NdSbpSignature(call.num_blobs()));
  absl::InlinedVector<int, NdSbp::kMaxAxes> digit(axes, 0);
  for (int64_t k = 0; k < total; ++k) {
    for (int b = 0; b < call.num_blobs(); ++b) {
      NdSbp nd;
      for (int i = 0; i < axes; ++i) nd.push_back((*per_axis[i])[digit[i]][b]);
      list[k][b] = nd;
    }
    for (int i = axes - 1; i >= 0; --i) {
      if (++digit[i] < static_cast<int>(per_axis[i]->size())) break;
      digit[i] = 0;
    }
  }
  if (call.def().nd_candidate_hook()) {
    NdCandidateContext ctx(call, p.input_descs, p.output_descs, h, &list);
    absl::Status s = call.def().nd_candidate_hook()(ctx);
    if (!s.ok()) {
      return absl::Status(s.code(), absl::StrCat(op, ": N-D candidate hook: ", s.message()));
    }
  }
  return list;
}

}  // namespace oneflow_sbp::internal
