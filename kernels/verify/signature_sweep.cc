#include "kernels/verify/signature_sweep.h"

#include <algorithm>
#include <cmath>
#include <limits>
#include <random>
#include <set>
#include <utility>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "oneflow_sbp/inference/candidate_list.h"
#include "oneflow_sbp/inference/candidate_stages.h"
#include "oneflow_sbp/values/placement.h"
#include "oneflow_sbp/rule_api/sbp_signature.h"
#include "oneflow_sbp/inference/signature_inference.h"
#include "oneflow_sbp/values/status_macros.h"
#include "oneflow_sbp/values/tensor_desc.h"
#include "oneflow_sbp/values/quoted_input.h"

namespace oneflow_sbp::kernels {
namespace {

std::vector<TensorDesc> DescsOf(absl::Span<const LocalTensor> inputs) {
  std::vector<TensorDesc> descs;
  for (const LocalTensor& t : inputs) {
    absl::StatusOr<Shape> shape = Shape::Make(t.dims());
    descs.push_back(TensorDesc{shape.ok() ? *shape : Shape(), t.dtype()});
  }
  return descs;
}

// The kept N-D candidates of `call` on `placement`, distinct, in the
// engine's order, then the N-D products that hold P(max)/P(min) (the
// planned policy's extended candidates) and pass the shape filter.
absl::StatusOr<std::vector<NdSbpSignature>> NdCandidates(std::shared_ptr<const OpCall> call,
                                                         const std::vector<TensorDesc>& in_descs,
                                                         const Placement& placement) {
  InferRequest req;
  req.op = std::move(call);
  req.placement = placement;
  for (const TensorDesc& d : in_descs) {
    req.inputs.push_back(
        InferInput(d, NdSbp::Repeat(SbpParallel::Broadcast(), placement.num_axes())));
  }
  req.explain = true;
  OFS_ASSIGN_OR_RETURN(InferResult r, InferSignature(req));
  std::vector<NdSbpSignature> out;
  std::set<std::string> seen;
  for (const CandidateRecord& c : r.candidates) {
    if (c.status != CandidateStatus::kChosen && c.status != CandidateStatus::kRanked) continue;
    if (!seen.insert(SignatureToString(*req.op, c.signature)).second) continue;
    out.push_back(c.signature);
  }
  if (!req.op->def().extended_sbp_fn()) return out;
  OFS_ASSIGN_OR_RETURN(PreparedRequest p, PrepareRequest(req));
  OFS_ASSIGN_OR_RETURN(std::vector<NdSbpSignature> all, ExpandCandidates( req, p,
      CandidateSource{/*deduplicate=*/true, /*run_nd_hook=*/true, CandidateSet::kExtended}));
  for (const NdSbpSignature& sig : all) {
    bool extended = false;
    bool splittable = true;
    for (int b = 0; b < static_cast<int>(sig.size()); ++b) {
      extended = extended || (sig[b].any_partial() && !sig[b].any_partial_sum());
      const TensorDesc& d = b < req.op->num_inputs() ? p.input_descs[b]
                                                     : p.output_descs[b - req.op->num_inputs()];
      splittable = splittable && IsSplittable(d.shape, sig[b], placement.hierarchy());
    }
    if (!extended || !splittable) continue;
    if (seen.insert(SignatureToString(*req.op, sig)).second) out.push_back(sig);
  }
  return out;
}

// The first `n` of a seeded Fisher-Yates shuffle, in their original order
// (so a report lists them as the full run would).
std::vector<NdSbpSignature> Sample(std::vector<NdSbpSignature> all, int n, uint64_t seed) {
  if (n < 0 || static_cast<size_t>(n) >= all.size()) return all;
  std::vector<size_t> idx(all.size());
  for (size_t i = 0; i < idx.size(); ++i) idx[i] = i;
  std::mt19937_64 rng(seed);
  for (size_t i = idx.size() - 1; i > 0; --i) {
    // rng() % (i + 1): the modulo bias is irrelevant for a sample.
    std::swap(idx[i], idx[rng() % (i + 1)]);
  }
  idx.resize(static_cast<size_t>(n));
  std::sort(idx.begin(), idx.end());
  std::vector<NdSbpSignature> out;
  for (size_t i : idx) out.push_back(std::move(all[i]));
  return out;
}

}  // namespace

double MaxAbsError(const LocalTensor& actual, const LocalTensor& expected) {
  constexpr double kInf = std::numeric_limits<double>::infinity();
  if (!actual.defined() || !expected.defined()) {
    return actual.defined() == expected.defined() ? 0 : kInf;
  }
  if (actual.dims() != expected.dims()) return kInf;
  double worst = 0;
  for (int64_t i = 0; i < actual.elem_cnt(); ++i) {
    const double a = actual.GetDouble(i);
    const double e = expected.GetDouble(i);
    if (std::isnan(a) || std::isnan(e)) {
      if (std::isnan(a) != std::isnan(e)) return kInf;
      continue;
    }
    if (std::isinf(a) || std::isinf(e)) {
      if (a != e) return kInf;
      continue;
    }
    worst = std::max(worst, std::abs(a - e));
  }
  return worst;
}

std::string SweepFailure::ToString() const {
  std::string where = signature.empty() ? "" : absl::StrCat(signature, " on ", placement, ": ");
  return absl::StrCat(where, blob, blob.empty() ? "" : " ", detail);
}

std::string SweepResult::Report() const {
  std::vector<std::string> lines;
  for (const SweepFailure& f : failures) lines.push_back(f.ToString());
  return absl::StrCat(op, ": ", failures.size(), " of ", checked, " signatures failed\n  ",
                      absl::StrJoin(lines, "\n  "));
}

namespace {

// One sweep of `call` on `inputs`: the reference result once, then every
// signature checked against it; TakeResult() hands over the failures.
class Sweeper {
 public:
  Sweeper(std::shared_ptr<const OpCall> call, absl::Span<const LocalTensor> inputs,
          const SweepOptions& options)
      : call_(std::move(call)), inputs_(inputs), options_(options), in_descs_(DescsOf(inputs)) {
    result_.op = call_->type_name();
    harness_ = options_.harness;
    harness_.return_mutable_inputs = true;
    // Blob index of each result RunSharded returns: outputs, then the
    // mutable inputs.
    for (int i = 0; i < call_->num_outputs(); ++i) {
      result_blobs_.push_back(call_->num_inputs() + i);
    }
    for (int b = 0; b < call_->num_inputs(); ++b) {
      if (call_->is_mutable_input(b)) result_blobs_.push_back(b);
    }
  }

  // The output descs and the reference result; false (with the failure
  // recorded) when the op cannot get that far.
  bool Prepare() {
    absl::StatusOr<std::vector<TensorDesc>> out_descs = call_->InferOutputDescs(in_descs_);
    if (!out_descs.ok()) {
      FailOp(absl::StrCat("shape: ", out_descs.status().message()));
      return false;
    }
    out_descs_ = *std::move(out_descs);
    absl::StatusOr<std::vector<LocalTensor>> want = RunReference(call_, inputs_, harness_);
    if (!want.ok()) {
      FailOp(absl::StrCat("reference: ", want.status().message()));
      return false;
    }
    want_ = *std::move(want);
    return true;
  }

  // The 1-D candidates on the placement `text`, the extended ones
  // (P(max)/P(min), offered under `planned`) included, and all-B.
  void Sweep1d(const std::string& text) {
    absl::StatusOr<Placement> placement = Placement::Parse(text);
    if (!placement.ok()) {
      FailOp(absl::StrCat("placement ", QuotedInput(text), ": ", placement.status().message()));
      return;
    }
    const int64_t n = placement->parallel_num();
    absl::StatusOr<std::vector<SbpSignature>> list =
        GetSbpCandidates(*call_, in_descs_, out_descs_, n, n, placement->device_type(),
                         CandidateSet::kExtended);
    if (!list.ok()) {
      FailOp(absl::StrCat("candidates on ", text, ": ", list.status().message()));
      return;
    }
    list->push_back(SbpSignature(call_->num_blobs(), SbpParallel::Broadcast()));
    for (const SbpSignature& sig : *list) Check(*placement, ToNdSignature(sig));
  }

  // The N-D candidates inference keeps on the placement `text`, or a
  // seeded sample of them.
  void SweepNd(const std::string& text, bool sampled) {
    absl::StatusOr<Placement> placement = Placement::Parse(text);
    if (!placement.ok()) {
      FailOp(absl::StrCat("placement ", QuotedInput(text), ": ", placement.status().message()));
      return;
    }
    absl::StatusOr<std::vector<NdSbpSignature>> list = NdCandidates(call_, in_descs_, *placement);
    if (!list.ok()) {
      FailOp(absl::StrCat("inference on ", text, ": ", list.status().message()));
      return;
    }
    if (sampled) *list = Sample(*std::move(list), options_.nd_sample_size, options_.sample_seed);
    for (const NdSbpSignature& sig : *list) Check(*placement, sig);
  }

  SweepResult TakeResult() { return std::move(result_); }

 private:
  // A failure of the op as a whole, not of one signature.
  void FailOp(const std::string& what) {
    SweepFailure f;
    f.detail = what;
    result_.failures.push_back(std::move(f));
  }

  // `sig` on `placement` against the reference; bool inputs cannot be P.
  void Check(const Placement& placement, const NdSbpSignature& sig) {
    for (int b = 0; b < call_->num_inputs(); ++b) {
      if (in_descs_[b].dtype == DataType::kBool && sig[b].any_partial()) {
        ++result_.skipped;
        return;
      }
    }
    ++result_.checked;
    SweepFailure base;
    base.placement = placement.ToString();
    base.signature = SignatureToString(*call_, sig);
    absl::StatusOr<std::vector<LocalTensor>> got =
        RunSharded(call_, inputs_, placement, sig, harness_);
    if (!got.ok()) {
      base.detail = got.status().ToString();
      result_.failures.push_back(std::move(base));
      return;
    }
    for (size_t i = 0; i < got->size() && i < want_.size(); ++i) {
      const Tolerance tol =
          options_.tolerance ? *options_.tolerance : DefaultTolerance(want_[i].dtype());
      const std::string diff = CompareTensors((*got)[i], want_[i], tol);
      if (diff.empty()) continue;
      SweepFailure f = base;
      f.blob = call_->bn(result_blobs_[i]);
      f.max_error = MaxAbsError((*got)[i], want_[i]);
      f.detail = diff;
      result_.failures.push_back(std::move(f));
    }
  }

  const std::shared_ptr<const OpCall> call_;
  const absl::Span<const LocalTensor> inputs_;
  const SweepOptions& options_;
  const std::vector<TensorDesc> in_descs_;
  HarnessOptions harness_;
  std::vector<int> result_blobs_;
  std::vector<TensorDesc> out_descs_;
  std::vector<LocalTensor> want_;
  SweepResult result_;
};

}  // namespace

SweepResult SweepSignatures(std::shared_ptr<const OpCall> call,
                            absl::Span<const LocalTensor> inputs, const SweepOptions& options) {
  Sweeper sweeper(std::move(call), inputs, options);
  if (!sweeper.Prepare()) return sweeper.TakeResult();
  for (const std::string& text : options.placements_1d) sweeper.Sweep1d(text);
  for (const std::string& text : options.placements_nd) sweeper.SweepNd(text, false);
  for (const std::string& text : options.placements_nd_sampled) sweeper.SweepNd(text, true);
  return sweeper.TakeResult();
}

}  // namespace oneflow_sbp::kernels
