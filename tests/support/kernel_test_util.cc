#include "tests/support/kernel_test_util.h"

#include <cstdlib>
#include <iostream>
#include <utility>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "kernels/kernel_context.h"
#include "kernels/kernel_registry.h"
#include "kernels/verify/random_tensor.h"
#include "tests/support/infer_test_util.h"

namespace oneflow_sbp::testing {
namespace {

LocalTensor OrDie(absl::StatusOr<LocalTensor> t) {
  if (!t.ok()) {
    std::cerr << "kernel_test_util: " << t.status() << "\n";
    std::abort();
  }
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
  return OrDie(kernels::IntValues(dtype, dims, seed, lo, hi));
}

LocalTensor GridTensor(DataType dtype, const std::vector<int64_t>& dims, uint64_t seed, double lo,
                       double hi) {
  return OrDie(kernels::GridValues(dtype, dims, seed, lo, hi));
}

LocalTensor BoolTensor(const std::vector<int64_t>& dims, uint64_t seed) {
  return OrDie(kernels::BoolValues(dims, seed));
}

LocalTensor Tensor(DataType dtype, const std::vector<int64_t>& dims,
                   const std::vector<double>& values) {
  return OrDie(LocalTensor::FromDoubles(dtype, dims, values));
}

LocalTensor CentralDifference(const LocalTensor& t, const LocalTensor& dy,
                              const std::function<LocalTensor(const LocalTensor&)>& forward,
                              double h) {
  auto loss = [&](const LocalTensor& v) {
    const LocalTensor y = forward(v);
    double s = 0;
    for (int64_t i = 0; i < y.elem_cnt(); ++i) s += y.GetDouble(i) * dy.GetDouble(i);
    return s;
  };
  std::vector<double> d(t.elem_cnt());
  for (int64_t i = 0; i < t.elem_cnt(); ++i) {
    LocalTensor a = t.Clone(), b = t.Clone();
    a.SetDouble(i, t.GetDouble(i) + h);
    b.SetDouble(i, t.GetDouble(i) - h);
    d[i] = (loss(a) - loss(b)) / (2 * h);
  }
  return Tensor(t.dtype(), std::vector<int64_t>(t.dims().begin(), t.dims().end()), d);
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
                                                   int64_t parallel_id, DeviceType device,
                                                   comm::Communicator* world) {
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
      absl::MakeConstSpan(*layouts).subspan(inputs.size()), DeviceType::kCpu);
  if (!outputs.ok()) return outputs.status();
  // Device outputs are poisoned on the host, then moved (as RunSharded
  // does): fresh device memory is often zero, which would hide a kernel
  // that skips elements whose expected value is 0 (masked rows, empty sums).
  for (LocalTensor& o : *outputs) {
    if (device == DeviceType::kCpu) continue;
    kernels::Poison(o);
    absl::StatusOr<LocalTensor> moved = o.CopyTo(device);
    if (!moved.ok()) return moved.status();
    o = *std::move(moved);
  }
  absl::StatusOr<kernels::KernelContext> ctx = kernels::KernelContext::MakeWithLayouts(
      *call, *placement, parallel_id, *layouts, locals, *outputs);
  if (!ctx.ok()) return ctx.status();
  absl::Status s = ctx->SetWorld(world);
  if (s.ok()) s = kernels::RunKernel(*ctx);
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
  kernels::SweepResult r = kernels::SweepSignatures(std::move(call), inputs, options);
  SweepResult result;
  result.op = r.op;
  result.checked = r.checked;
  result.skipped = r.skipped;
  for (const kernels::SweepFailure& f : r.failures) result.failures.push_back(f.ToString());
  return result;
}

std::string SweepResult::Report() const {
  return absl::StrCat(op, ": ", failures.size(), " of ", checked, " signatures failed\n  ",
                      absl::StrJoin(failures, "\n  "));
}

}  // namespace oneflow_sbp::testing
