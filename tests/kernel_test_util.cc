#include "tests/kernel_test_util.h"

#include <cstdlib>
#include <iostream>
#include <random>
#include <set>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "oneflow_sbp/candidate_list.h"
#include "oneflow_sbp/signature_inference.h"
#include "ops/kernels/kernel_context.h"
#include "ops/kernels/kernel_registry.h"
#include "tests/infer_test_util.h"

namespace oneflow_sbp::testing {
namespace {

template <typename Gen>
LocalTensor Generate(DataType dtype, const std::vector<int64_t>& dims, Gen&& gen) {
  absl::StatusOr<LocalTensor> t = LocalTensor::Empty(dtype, dims);
  if (!t.ok()) {
    std::cerr << "kernel_test_util: " << t.status() << "\n";
    std::abort();
  }
  for (int64_t i = 0; i < t->elem_cnt(); ++i) t->SetDouble(i, gen());
  return *std::move(t);
}

std::vector<TensorDesc> DescsOf(const std::vector<LocalTensor>& inputs) {
  std::vector<TensorDesc> descs;
  for (const LocalTensor& t : inputs) descs.push_back(TensorDesc{*Shape::Make(t.dims()), t.dtype()});
  return descs;
}

}  // namespace

LocalTensor IntTensor(DataType dtype, const std::vector<int64_t>& dims, uint64_t seed, int lo,
                      int hi) {
  std::mt19937_64 rng(seed);
  std::uniform_int_distribution<int> pick(lo, hi);
  return Generate(dtype, dims, [&] { return static_cast<double>(pick(rng)); });
}

LocalTensor GridTensor(DataType dtype, const std::vector<int64_t>& dims, uint64_t seed, double lo,
                       double hi) {
  std::mt19937_64 rng(seed);
  std::uniform_int_distribution<int64_t> pick(0, static_cast<int64_t>((hi - lo) * 8));
  return Generate(dtype, dims, [&] { return lo + static_cast<double>(pick(rng)) / 8; });
}

LocalTensor BoolTensor(const std::vector<int64_t>& dims, uint64_t seed) {
  std::mt19937_64 rng(seed * 7919);
  return Generate(DataType::kBool, dims, [&] { return static_cast<double>(rng() % 2); });
}

LocalTensor Tensor(DataType dtype, const std::vector<int64_t>& dims,
                   const std::vector<double>& values) {
  absl::StatusOr<LocalTensor> t = LocalTensor::FromDoubles(dtype, dims, values);
  if (!t.ok()) {
    std::cerr << "kernel_test_util: " << t.status() << "\n";
    std::abort();
  }
  return *std::move(t);
}

std::shared_ptr<const OpCall> CallOrDie(const std::string& op, int num_inputs,
                                        const std::vector<std::string>& attrs) {
  absl::StatusOr<std::shared_ptr<const OpCall>> call = MakeCall(op, num_inputs, attrs);
  if (!call.ok()) {
    std::cerr << "kernel_test_util: " << op << ": " << call.status() << "\n";
    std::abort();
  }
  return *call;
}

absl::StatusOr<std::vector<LocalTensor>> RunOnce(const std::string& op,
                                                 const std::vector<LocalTensor>& inputs,
                                                 const std::vector<std::string>& attrs) {
  absl::StatusOr<std::shared_ptr<const OpCall>> call =
      MakeCall(op, static_cast<int>(inputs.size()), attrs);
  if (!call.ok()) return call.status();
  return kernels::RunReference(*call, inputs);
}

absl::StatusOr<std::vector<LocalTensor>> RunOnRank(const std::string& op,
                                                   const std::vector<LocalTensor>& inputs,
                                                   const std::vector<std::string>& attrs,
                                                   const std::string& placement_text,
                                                   const std::vector<std::string>& signature,
                                                   int64_t parallel_id, DeviceType device) {
  absl::StatusOr<std::shared_ptr<const OpCall>> call =
      MakeCall(op, static_cast<int>(inputs.size()), attrs);
  if (!call.ok()) return call.status();
  absl::StatusOr<Placement> placement = Placement::Parse(placement_text);
  if (!placement.ok()) return placement.status();
  NdSbpSignature sig;
  for (const std::string& text : signature) {
    absl::StatusOr<NdSbp> nd = NdSbp::Parse(text);
    if (!nd.ok()) return nd.status();
    sig.push_back(*nd);
  }
  std::vector<TensorDesc> descs = DescsOf(inputs);
  absl::StatusOr<std::vector<TensorDesc>> out = (*call)->InferOutputDescs(descs);
  if (!out.ok()) return out.status();
  descs.insert(descs.end(), out->begin(), out->end());
  std::vector<LocalTensor> locals;
  for (size_t b = 0; b < inputs.size(); ++b) {
    absl::StatusOr<std::vector<LocalTensor>> l =
        kernels::DistributeTensor(inputs[b], sig[b], *placement);
    if (!l.ok()) return l.status();
    absl::StatusOr<LocalTensor> on_device = (*l)[parallel_id].CopyTo(device);
    if (!on_device.ok()) return on_device.status();
    locals.push_back(*std::move(on_device));
  }
  absl::StatusOr<std::vector<kernels::BlobLayout>> layouts =
      kernels::MakeBlobLayouts(**call, *placement, parallel_id, descs, sig);
  if (!layouts.ok()) return layouts.status();
  absl::StatusOr<std::vector<LocalTensor>> outputs = kernels::AllocateLocalOutputs(
      absl::MakeConstSpan(*layouts).subspan(inputs.size()), device);
  if (!outputs.ok()) return outputs.status();
  absl::StatusOr<kernels::KernelContext> ctx = kernels::KernelContext::MakeWithLayouts(
      *call, *placement, parallel_id, *layouts, locals, *outputs);
  if (!ctx.ok()) return ctx.status();
  absl::Status s = kernels::RunKernel(*ctx);
  if (!s.ok()) return s;
  if (device == DeviceType::kCpu) return *outputs;
  std::vector<LocalTensor> host;
  for (const LocalTensor& o : *outputs) {
    absl::StatusOr<LocalTensor> h = o.CopyTo(DeviceType::kCpu);
    if (!h.ok()) return h.status();
    host.push_back(*std::move(h));
  }
  return host;
}

std::string SweepResult::Report() const {
  return absl::StrCat(op, ": ", failures.size(), " of ", checked, " signatures failed\n  ",
                      absl::StrJoin(failures, "\n  "));
}

std::shared_ptr<const OpCall> CallWithCounts(const std::string& op,
                                             const std::vector<int>& input_counts,
                                             const std::vector<std::string>& attrs) {
  // MakeCall (with the required inputs only) parses the attributes; the
  // counts replace its deduced ones.
  absl::StatusOr<std::shared_ptr<const OpDef>> def = Registry().Get(op);
  absl::StatusOr<std::shared_ptr<const OpCall>> parsed =
      def.ok() ? MakeCall(op, static_cast<int>((*def)->inputs().size()), attrs) : def.status();
  absl::StatusOr<std::shared_ptr<const OpCall>> call =
      parsed.ok() ? OpCall::Make(*def, input_counts, (*parsed)->attrs()) : parsed.status();
  if (!call.ok()) {
    std::cerr << "kernel_test_util: " << op << ": " << call.status() << "\n";
    std::abort();
  }
  return *call;
}

SweepResult SweepSignatures(const std::string& op, const std::vector<LocalTensor>& inputs,
                            const std::vector<std::string>& attrs,
                            const SweepOptions& options) {
  absl::StatusOr<std::shared_ptr<const OpCall>> made =
      MakeCall(op, static_cast<int>(inputs.size()), attrs);
  if (!made.ok()) {
    SweepResult result;
    result.op = op;
    result.failures.push_back(absl::StrCat("MakeCall: ", made.status().message()));
    return result;
  }
  return SweepSignatures(*made, inputs, options);
}

SweepResult SweepSignatures(std::shared_ptr<const OpCall> call,
                            const std::vector<LocalTensor>& inputs,
                            const SweepOptions& options) {
  SweepResult result;
  result.op = call->type_name();
  auto fail = [&](const std::string& what) { result.failures.push_back(what); };
  const std::vector<TensorDesc> in_descs = DescsOf(inputs);
  absl::StatusOr<std::vector<TensorDesc>> out_descs = call->InferOutputDescs(in_descs);
  if (!out_descs.ok()) {
    fail(absl::StrCat("shape: ", out_descs.status().message()));
    return result;
  }
  absl::StatusOr<std::vector<LocalTensor>> want =
      kernels::RunReference(call, inputs, options.harness);
  if (!want.ok()) {
    fail(absl::StrCat("reference: ", want.status().message()));
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
    const std::string where =
        absl::StrCat(SignatureToString(*call, sig), " on ", placement.ToString());
    absl::StatusOr<std::vector<LocalTensor>> got =
        kernels::RunSharded(call, inputs, placement, sig, options.harness);
    if (!got.ok()) {
      fail(absl::StrCat(where, ": ", got.status().ToString()));
      return;
    }
    for (size_t i = 0; i < got->size(); ++i) {
      const kernels::Tolerance tol =
          options.tolerance ? *options.tolerance : kernels::DefaultTolerance((*want)[i].dtype());
      const std::string diff = kernels::CompareTensors((*got)[i], (*want)[i], tol);
      if (!diff.empty()) {
        fail(absl::StrCat(where, ": ", call->bn(call->num_inputs() + static_cast<int>(i)), " ",
                          diff));
      }
    }
  };
  for (const std::string& text : options.placements_1d) {
    const Placement placement = *Placement::Parse(text);
    const int64_t n = placement.parallel_num();
    absl::StatusOr<std::vector<SbpSignature>> list =
        GetSbpCandidates(*call, in_descs, *out_descs, n, n, DeviceType::kCpu);
    if (!list.ok()) {
      fail(absl::StrCat("candidates on ", text, ": ", list.status().message()));
      continue;
    }
    list->push_back(SbpSignature(call->num_blobs(), SbpParallel::Broadcast()));
    for (const SbpSignature& sig : *list) check(placement, ToNdSignature(sig));
  }
  for (const std::string& text : options.placements_nd) {
    InferRequest req;
    req.op = call;
    req.placement = *Placement::Parse(text);
    for (const TensorDesc& d : in_descs) {
      req.inputs.push_back(
          InferInput(d, NdSbp::Repeat(SbpParallel::Broadcast(), req.placement.num_axes())));
    }
    req.explain = true;
    absl::StatusOr<InferResult> r = InferSignature(req);
    if (!r.ok()) {
      fail(absl::StrCat("inference on ", text, ": ", r.status().message()));
      continue;
    }
    std::set<std::string> seen;
    for (const CandidateRecord& c : r->candidates) {
      if (c.status != CandidateStatus::kChosen && c.status != CandidateStatus::kRanked) continue;
      if (!seen.insert(SignatureToString(*call, c.signature)).second) continue;
      check(req.placement, c.signature);
    }
  }
  return result;
}

}  // namespace oneflow_sbp::testing
