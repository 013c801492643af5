#include "oneflow_sbp/inference/candidate_stages.h"

#include <algorithm>
#include <numeric>
#include <utility>

#include "absl/container/flat_hash_set.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "oneflow_sbp/inference/candidate_list.h"
#include "oneflow_sbp/rule_api/nd_candidate_context.h"
#include "oneflow_sbp/values/nd_sbp_validation.h"
#include "oneflow_sbp/values/status_macros.h"

namespace oneflow_sbp {
namespace {

absl::Status ValidateConstraints(const InferRequest& req, PreparedRequest& p) {
  const OpCall& call = *p.call;
  const std::string& op = call.type_name();
  const size_t axes = req.placement.hierarchy().size();
  if (static_cast<int>(req.constraints.size()) != call.num_blobs()) {
    return absl::InvalidArgumentError(absl::StrCat(
        op, ": ", req.constraints.size(), " constraint slots for ", call.num_blobs(), " blobs"));
  }
  p.constraints = req.constraints;
  for (int b = 0; b < call.num_blobs(); ++b) {
    const std::optional<NdSbp>& c = p.constraints[b];
    if (!c) continue;
    if (c->size() != static_cast<int>(axes)) {
      return absl::InvalidArgumentError(absl::StrCat(
          op, ": constraint on ", call.bn(b), " ", c->ToString(), " has ", c->size(),
          " entries but placement ", req.placement.ToString(), " has ", axes, " mesh axes"));
    }
    const Shape& shape = p.blob_desc(b).shape;
    for (int i = 0; i < c->size(); ++i) {
      const SbpParallel s = (*c)[i];
      if (s.is_split() && s.split_axis() >= shape.rank()) {
        return absl::InvalidArgumentError(absl::StrCat(
            op, ": constraint on ", call.bn(b), " ", c->ToString(), " splits dim ",
            s.split_axis(), " but ", p.blob_desc(b).ToString(), " has rank ", shape.rank()));
      }
      if (!s.is_unset()) p.has_constraints = true;
    }
  }
  return absl::OkStatus();
}

// One list per distinct mesh extent: the rule's candidates plus all-B.
absl::StatusOr<std::vector<SbpSignature>> ExtentList(const InferRequest& req,
                                                     const PreparedRequest& p, int64_t extent,
                                                     const CandidateSource& source) {
  const bool deduplicate = source.deduplicate;
  OFS_ASSIGN_OR_RETURN(std::vector<SbpSignature> l, GetSbpCandidates(*p.call, p.input_descs,
      p.output_descs, extent, req.placement.parallel_num(), req.placement.device_type(),
      source.set));
  // The engine always appends all-B last, even if the rule emitted it.
  l.push_back(SbpSignature(p.call->num_blobs(), SbpParallel::Broadcast()));
  if (deduplicate) {
    std::vector<SbpSignature> unique;
    for (SbpSignature& sig : l) {
      if (std::find(unique.begin(), unique.end(), sig) == unique.end()) {
        unique.push_back(std::move(sig));
      }
    }
    l = std::move(unique);
  }
  return l;
}

// Row-major direct product, last mesh axis fastest.
std::vector<NdSbpSignature> DirectProduct(int num_blobs,
                                          const std::vector<const std::vector<SbpSignature>*>& per_axis,
                                          int64_t total) {
  const int axes = static_cast<int>(per_axis.size());
  std::vector<NdSbpSignature> list;
  list.reserve(total);
  absl::InlinedVector<int, NdSbp::kMaxAxes> digit(axes, 0);
  for (int64_t k = 0; k < total; ++k) {
    NdSbpSignature& sig = list.emplace_back(num_blobs);
    for (int b = 0; b < num_blobs; ++b) {
      NdSbp& nd = sig[b];
      for (int i = 0; i < axes; ++i) nd.push_back((*per_axis[i])[digit[i]][b]);
    }
    for (int i = axes - 1; i >= 0; --i) {
      if (++digit[i] < static_cast<int>(per_axis[i]->size())) break;
      digit[i] = 0;
    }
  }
  return list;
}

// The filters' removal, applied to ids; `fails(id)` is asked once per id.
template <typename Fails>
void Remove(Removal removal, std::vector<int>* ids, Fails fails) {
  if (removal == Removal::kKeepOrder) {
    ids->erase(std::remove_if(ids->begin(), ids->end(), fails), ids->end());
    return;
  }
  for (int i = static_cast<int>(ids->size()) - 1; i >= 0; --i) {
    if (!fails((*ids)[i])) continue;
    (*ids)[i] = ids->back();
    ids->pop_back();
  }
}

}  // namespace

const TensorDesc& PreparedRequest::blob_desc(int blob) const {
  const int n = static_cast<int>(input_descs.size());
  return blob < n ? input_descs[blob] : output_descs[blob - n];
}

absl::StatusOr<PreparedRequest> PrepareRequest(const InferRequest& req) {
  if (req.op == nullptr) {
    return absl::InvalidArgumentError("inference request names no op");
  }
  const OpCall& call = *req.op;
  const std::string& op = call.type_name();
  if (static_cast<int>(req.inputs.size()) != call.num_inputs()) {
    std::vector<std::string> bns;
    for (int b = 0; b < call.num_inputs(); ++b) bns.push_back(call.bn(b));
    return absl::InvalidArgumentError(absl::StrCat(
        op, " expects ", call.num_inputs(), " input", call.num_inputs() == 1 ? "" : "s", " (",
        absl::StrJoin(bns, ", "), "), got ", req.inputs.size()));
  }
  PreparedRequest p;
  p.call = &call;
  for (int b = 0; b < call.num_inputs(); ++b) {
    const InferInput& in = req.inputs[b];
    absl::Status s = ValidateNdSbp(in.nd_sbp(), in.desc().shape, req.placement.hierarchy());
    if (!s.ok()) {
      return absl::InvalidArgumentError(absl::StrCat(op, ": input ", call.bn(b), " ",
                                                     in.desc().ToString(), ": ", s.message()));
    }
    p.input_descs.push_back(in.desc());
  }
  OFS_ASSIGN_OR_RETURN(std::vector<TensorDesc> outs, call.InferOutputDescs(p.input_descs));
  p.output_descs = std::move(outs);
  if (!req.constraints.empty()) {
    absl::Status s = ValidateConstraints(req, p);
    OFS_RETURN_IF_ERROR(s);
  }
  return p;
}

absl::StatusOr<std::vector<NdSbpSignature>> ExpandCandidates(const InferRequest& req,
                                                             const PreparedRequest& p,
                                                             const CandidateSource& source) {
  const OpCall& call = *p.call;
  const absl::Span<const int64_t> h = req.placement.hierarchy();
  std::vector<std::pair<int64_t, std::vector<SbpSignature>>> lists;
  for (int64_t extent : h) {
    if (std::any_of(lists.begin(), lists.end(), [&](const auto& e) { return e.first == extent; })) {
      continue;
    }
    OFS_ASSIGN_OR_RETURN(std::vector<SbpSignature> l, ExtentList(req, p, extent, source));
    lists.emplace_back(extent, std::move(l));
  }
  std::vector<const std::vector<SbpSignature>*> per_axis;
  int64_t total = 1;
  for (int64_t extent : h) {
    for (const auto& e : lists) {
      if (e.first == extent) per_axis.push_back(&e.second);
    }
    total *= static_cast<int64_t>(per_axis.back()->size());
    if (total > kMaxNdCandidates) {
      return absl::ResourceExhaustedError(absl::StrCat(
          call.type_name(), ": the N-D candidate product on hierarchy [", absl::StrJoin(h, ","),
          "] exceeds ", kMaxNdCandidates, " signatures"));
    }
  }
  // Refused before the product is built: an explanation of this many
  // candidates would not be read, and the product alone can take 100 MB.
  absl::Status explainable = CheckExplainable(req, total);
  OFS_RETURN_IF_ERROR(explainable);
  std::vector<NdSbpSignature> list = DirectProduct(call.num_blobs(), per_axis, total);
  if (source.run_nd_hook && call.def().nd_candidate_hook()) {
    NdCandidateContext ctx(call, p.input_descs, p.output_descs, h, &list);
    absl::Status s = call.def().nd_candidate_hook()(ctx);
    if (s.ok()) s = ctx.status();
    if (!s.ok()) {
      return absl::Status(s.code(),
                          absl::StrCat(call.type_name(), ": N-D candidate hook: ", s.message()));
    }
  }
  if (source.set == CandidateSet::kExtended) {
    // The product may pair P(max) on one axis with P on another in one
    // blob: an order-dependent value (ValidateNdSbp refuses it), dropped.
    list.erase(std::remove_if(list.begin(), list.end(),
                              [](const NdSbpSignature& sig) {
                                return std::any_of(sig.begin(), sig.end(), [](const NdSbp& nd) {
                                  return nd.mixes_partial_kinds();
                                });
                              }),
               list.end());
  }
  if (source.deduplicate) {
    absl::flat_hash_set<NdSbpSignature> seen;
    std::vector<NdSbpSignature> unique;
    for (NdSbpSignature& sig : list) {
      if (seen.insert(sig).second) unique.push_back(std::move(sig));
    }
    list = std::move(unique);
  }
  return list;
}

std::vector<int> AllIds(const std::vector<NdSbpSignature>& all) {
  std::vector<int> ids(all.size());
  std::iota(ids.begin(), ids.end(), 0);
  return ids;
}

void FilterByShape(const InferRequest& req, const PreparedRequest& p,
                   const std::vector<NdSbpSignature>& all, const FilterRules& rules,
                   std::vector<int>* survivors, ExplainRecorder& explain) {
  const OpCall& call = *p.call;
  const absl::Span<const int64_t> h = req.placement.hierarchy();
  const int checked = rules.shape_checks_outputs ? call.num_blobs() : call.num_inputs();
  Remove(rules.removal, survivors, [&](int id) {
    for (int b = 0; b < checked; ++b) {
      const TensorDesc& d = p.blob_desc(b);
      if (IsSplittable(d.shape, all[id][b], h)) continue;
      explain.Filter(id, CandidateStatus::kFilteredByShape, [&] {
        const SbpParallel s = all[id][b][0];
        if (rules.per_dim_shape_notes && s.is_split()) {
          return absl::StrCat(call.bn(b), " ", s.ToString(), ": dim ", s.split_axis(), " has ",
                              d.shape.dim(s.split_axis()), " < ", h[0], " parts");
        }
        return absl::StrCat(call.bn(b), " ", d.ToString(), " cannot be split as ",
                            CompactNdSbpString(all[id][b]));
      });
      return true;
    }
    return false;
  });
}

void FilterByConstraints(const PreparedRequest& p, const std::vector<NdSbpSignature>& all,
                         const FilterRules& rules, std::vector<int>* survivors,
                         ExplainRecorder& explain) {
  if (!p.has_constraints) return;
  const OpCall& call = *p.call;
  const int checked = rules.constraints_check_outputs ? call.num_blobs() : call.num_inputs();
  Remove(rules.removal, survivors, [&](int id) {
    for (int b = 0; b < checked; ++b) {
      if (!p.constraints[b] || MatchesConstraint(all[id][b], *p.constraints[b])) continue;
      explain.Filter(id, CandidateStatus::kFilteredByConstraint, [&] {
        return absl::StrCat(call.bn(b), " is ", CompactNdSbpString(all[id][b]),
                            ", constraint wants ", CompactNdSbpString(*p.constraints[b]));
      });
      return true;
    }
    return false;
  });
}

bool MatchesConstraint(const NdSbp& value, const NdSbp& constraint) {
  for (int i = 0; i < constraint.size(); ++i) {
    if (!constraint[i].is_unset() && constraint[i] != value[i]) return false;
  }
  return true;
}

std::string ConstraintsToString(const PreparedRequest& p) {
  std::vector<std::string> parts;
  for (int b = 0; b < p.call->num_blobs(); ++b) {
    if (p.constraints.empty() || !p.constraints[b]) continue;
    parts.push_back(absl::StrCat(p.call->bn(b), ":", CompactNdSbpString(*p.constraints[b])));
  }
  return absl::StrJoin(parts, " ");
}

}  // namespace oneflow_sbp
