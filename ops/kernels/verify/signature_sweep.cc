#include "ops/kernels/verify/signature_sweep.h"

#include <algorithm>
#include <cmath>
#include <limits>
#include <random>
#include <set>
#include <utility>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "oneflow_sbp/candidate_list.h"
#include "oneflow_sbp/placement.h"
#include "oneflow_sbp/sbp_signature.h"
#include "oneflow_sbp/signature_inference.h"
#include "oneflow_sbp/tensor_desc.h"

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
// engine's order.
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
  absl::StatusOr<InferResult> r = InferSignature(req);
  if (!r.ok()) return r.status();
  std::vector<NdSbpSignature> out;
  std::set<std::string> seen;
  for (const CandidateRecord& c : r->candidates) {
    if (c.status != CandidateStatus::kChosen && c.status != CandidateStatus::kRanked) continue;
    if (!seen.insert(SignatureToString(*req.op, c.signature)).second) continue;
    out.push_back(c.signature);
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

SweepResult SweepSignatures(std::shared_ptr<const OpCall> call,
                            absl::Span<const LocalTensor> inputs, const SweepOptions& options) {
  SweepResult result;
  result.op = call->type_name();
  auto fail_op = [&](const std::string& what) {
    SweepFailure f;
    f.detail = what;
    result.failures.push_back(std::move(f));
  };
  const std::vector<TensorDesc> in_descs = DescsOf(inputs);
  absl::StatusOr<std::vector<TensorDesc>> out_descs = call->InferOutputDescs(in_descs);
  if (!out_descs.ok()) {
    fail_op(absl::StrCat("shape: ", out_descs.status().message()));
    return result;
  }
  HarnessOptions harness = options.harness;
  harness.return_mutable_inputs = true;
  // Blob index of each result RunSharded returns: outputs, then the
  // mutable inputs.
  std::vector<int> result_blobs;
  for (int i = 0; i < call->num_outputs(); ++i) result_blobs.push_back(call->num_inputs() + i);
  for (int b = 0; b < call->num_inputs(); ++b) {
    if (call->is_mutable_input(b)) result_blobs.push_back(b);
  }
  absl::StatusOr<std::vector<LocalTensor>> want = RunReference(call, inputs, harness);
  if (!want.ok()) {
    fail_op(absl::StrCat("reference: ", want.status().message()));
    return result;
  }
  auto check = [&](const Placement& placement, const NdSbpSignature& sig) {
    for (int b = 0; b < call->num_inputs(); ++b) {
      if (in_descs[b].dtype == DataType::kBool && sig[b].any_partial_sum()) {
        ++result.skipped;
        return;
      }
    }
    ++result.checked;
    SweepFailure base;
    base.placement = placement.ToString();
    base.signature = SignatureToString(*call, sig);
    absl::StatusOr<std::vector<LocalTensor>> got =
        RunSharded(call, inputs, placement, sig, harness);
    if (!got.ok()) {
      base.detail = got.status().ToString();
      result.failures.push_back(std::move(base));
      return;
    }
    for (size_t i = 0; i < got->size() && i < want->size(); ++i) {
      const Tolerance tol =
          options.tolerance ? *options.tolerance : DefaultTolerance((*want)[i].dtype());
      const std::string diff = CompareTensors((*got)[i], (*want)[i], tol);
      if (diff.empty()) continue;
      SweepFailure f = base;
      f.blob = call->bn(result_blobs[i]);
      f.max_error = MaxAbsError((*got)[i], (*want)[i]);
      f.detail = diff;
      result.failures.push_back(std::move(f));
    }
  };
  for (const std::string& text : options.placements_1d) {
    absl::StatusOr<Placement> placement = Placement::Parse(text);
    if (!placement.ok()) {
      fail_op(absl::StrCat("placement '", text, "': ", placement.status().message()));
      continue;
    }
    const int64_t n = placement->parallel_num();
    absl::StatusOr<std::vector<SbpSignature>> list =
        GetSbpCandidates(*call, in_descs, *out_descs, n, n, placement->device_type());
    if (!list.ok()) {
      fail_op(absl::StrCat("candidates on ", text, ": ", list.status().message()));
      continue;
    }
    list->push_back(SbpSignature(call->num_blobs(), SbpParallel::Broadcast()));
    for (const SbpSignature& sig : *list) check(*placement, ToNdSignature(sig));
  }
  auto sweep_nd = [&](const std::string& text, bool sampled) {
    absl::StatusOr<Placement> placement = Placement::Parse(text);
    if (!placement.ok()) {
      fail_op(absl::StrCat("placement '", text, "': ", placement.status().message()));
      return;
    }
    absl::StatusOr<std::vector<NdSbpSignature>> list = NdCandidates(call, in_descs, *placement);
    if (!list.ok()) {
      fail_op(absl::StrCat("inference on ", text, ": ", list.status().message()));
      return;
    }
    if (sampled) *list = Sample(*std::move(list), options.nd_sample_size, options.sample_seed);
    for (const NdSbpSignature& sig : *list) check(*placement, sig);
  };
  for (const std::string& text : options.placements_nd) sweep_nd(text, false);
  for (const std::string& text : options.placements_nd_sampled) sweep_nd(text, true);
  return result;
}

}  // namespace oneflow_sbp::kernels
