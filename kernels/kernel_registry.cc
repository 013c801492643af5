#include "kernels/kernel_registry.h"

#include <algorithm>

#include "absl/strings/str_cat.h"
#include "oneflow_sbp/values/check.h"
#include "oneflow_sbp/values/quoted_input.h"
#include "oneflow_sbp/values/status_macros.h"

namespace oneflow_sbp::kernels {

KernelRegistry& KernelRegistry::Global() {
  static KernelRegistry* const registry = new KernelRegistry();
  return *registry;
}

absl::Status KernelRegistry::Register(std::string op, DeviceType device, KernelFn fn,
                                      std::vector<DataType> dtypes) {
  if (op.empty() || !fn) {
    return absl::InvalidArgumentError(absl::StrCat(
        "kernel registration needs an op name and a function (op ", QuotedInput(op), ")"));
  }
  absl::MutexLock lock(&mu_);
  auto key = std::make_pair(op, device);
  if (kernels_.contains(key)) {
    return absl::AlreadyExistsError(absl::StrCat(
        "a ", DeviceTypeName(device), " kernel for op ", QuotedInput(op), " is already registered"));
  }
  kernels_.emplace(std::move(key), Entry{std::move(fn), std::move(dtypes)});
  return absl::OkStatus();
}

absl::StatusOr<KernelFn> KernelRegistry::Find(absl::string_view op, DeviceType device) const {
  absl::MutexLock lock(&mu_);
  auto it = kernels_.find(std::make_pair(std::string(op), device));
  if (it == kernels_.end()) {
    return absl::UnimplementedError(
        absl::StrCat("no ", DeviceTypeName(device), " kernel for op ", QuotedInput(op)));
  }
  return it->second.fn;
}

std::vector<DataType> KernelRegistry::Dtypes(absl::string_view op, DeviceType device) const {
  absl::MutexLock lock(&mu_);
  auto it = kernels_.find(std::make_pair(std::string(op), device));
  return it == kernels_.end() ? std::vector<DataType>{} : it->second.dtypes;
}

std::vector<std::string> KernelRegistry::OpsWithKernels(DeviceType device) const {
  std::vector<std::string> ops;
  {
    absl::MutexLock lock(&mu_);
    for (const auto& [key, entry] : kernels_) {
      if (key.second == device) ops.push_back(key.first);
    }
  }
  std::sort(ops.begin(), ops.end());
  return ops;
}

absl::Status RegisterKernels(KernelRegistry& registry, DeviceType device,
                             absl::Span<const KernelDef> defs) {
  for (const KernelDef& d : defs) {
    absl::Status s = registry.Register(d.op, device, d.fn, d.dtypes);
    OFS_RETURN_IF_ERROR(s);
  }
  return absl::OkStatus();
}

absl::Status RunKernel(KernelContext& ctx, const KernelRegistry& registry) {
  OFS_ASSIGN_OR_RETURN(KernelFn fn, registry.Find(ctx.op_type(), ctx.device_type()));
  absl::Status s = (fn)(ctx);
  OFS_RETURN_IF_ERROR(s);
  return ctx.status();
}

namespace internal {

StaticKernelRegistration::StaticKernelRegistration(std::string op, DeviceType device,
                                                   KernelFn fn, std::vector<DataType> dtypes) {
  const absl::Status s =
      KernelRegistry::Global().Register(std::move(op), device, std::move(fn), std::move(dtypes));
  OFS_CHECK(s.ok()) << s.message();
}

StaticKernelRegistration::StaticKernelRegistration(
    const std::function<absl::Status(KernelRegistry&)>& fn) {
  const absl::Status s = fn(KernelRegistry::Global());
  OFS_CHECK(s.ok()) << s.message();
}

}  // namespace internal
}  // namespace oneflow_sbp::kernels
