// KernelRegistry: (op type name, device type) -> kernel.
//
// Example (a kernel file registers at program start):
//   absl::Status AbsKernel(KernelContext& ctx) { ... }
//   OFS_REGISTER_KERNEL("abs", DeviceType::kCpu, AbsKernel,
//                       {DataType::kFloat32, DataType::kFloat64});
//
//   // a caller:
//   absl::StatusOr<KernelFn> k = KernelRegistry::Global().Find("abs", DeviceType::kCpu);
//   absl::Status s = RunKernel(ctx);   // finds, runs, folds in ctx.status()
//
// Kernels live apart from OpDefs (op_registry.h) so that the inference
// libraries never link runtime code; an op may have rules and no kernel.
// The registry is thread-safe; entries are never removed. Libraries that
// register statically need `alwayslink = True` so the linker keeps them.
#ifndef KERNELS_KERNEL_REGISTRY_H_
#define KERNELS_KERNEL_REGISTRY_H_

#include <functional>
#include <string>
#include <utility>
#include <vector>

#include "absl/base/thread_annotations.h"
#include "absl/container/flat_hash_map.h"
#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/synchronization/mutex.h"
#include "absl/types/span.h"
#include "oneflow_sbp/values/data_type.h"
#include "oneflow_sbp/values/placement.h"
#include "kernels/kernel_context.h"

namespace oneflow_sbp::kernels {

// Runs the op on one rank's shards. Returns OK or an error naming the op
// (see KernelContext for the contract and the codes).
using KernelFn = std::function<absl::Status(KernelContext&)>;

class KernelRegistry {
 public:
  KernelRegistry() = default;
  KernelRegistry(const KernelRegistry&) = delete;
  KernelRegistry& operator=(const KernelRegistry&) = delete;

  // The process-wide registry that OFS_REGISTER_KERNEL fills.
  static KernelRegistry& Global();

  // `dtypes` documents the element types the kernel accepts for its
  // primary input (what `sbp kernels`-style listings, docs and tests read);
  // it does not restrict dispatch. kAlreadyExists if (op, device) is taken,
  // kInvalidArgument for an empty op name or an empty fn.
  absl::Status Register(std::string op, DeviceType device, KernelFn fn,
                        std::vector<DataType> dtypes = {});

  // kUnimplemented "no cpu kernel for op 'x'" if there is none.
  absl::StatusOr<KernelFn> Find(absl::string_view op, DeviceType device) const;
  // The dtypes given at registration; empty if none or unknown.
  std::vector<DataType> Dtypes(absl::string_view op, DeviceType device) const;
  // Op names with a kernel for `device`, sorted.
  std::vector<std::string> OpsWithKernels(DeviceType device) const;

 private:
  struct Entry {
    KernelFn fn;
    std::vector<DataType> dtypes;
  };
  mutable absl::Mutex mu_;
  absl::flat_hash_map<std::pair<std::string, DeviceType>, Entry> kernels_ ABSL_GUARDED_BY(mu_);
};

// One kernel of a family, for RegisterKernels.
struct KernelDef {
  std::string op;
  KernelFn fn;
  std::vector<DataType> dtypes;
};

// Registers every def for `device`; stops at the first error.
absl::Status RegisterKernels(KernelRegistry& registry, DeviceType device,
                             absl::Span<const KernelDef> defs);

// Finds the kernel for ctx's op and device in `registry`, runs it, and
// returns its status; if it returned OK but a misuse was recorded in the
// context (a missing attribute, an absent blob), returns that instead.
absl::Status RunKernel(KernelContext& ctx,
                       const KernelRegistry& registry = KernelRegistry::Global());

namespace internal {
// Registers at static-initialisation time; a failure is a bug in the
// program that defines the kernel (a duplicate), so it aborts with the
// reason, as StaticOpRegistration does.
struct StaticKernelRegistration {
  StaticKernelRegistration(std::string op, DeviceType device, KernelFn fn,
                           std::vector<DataType> dtypes = {});
  // Runs `fn` on the global registry (for families that register many
  // kernels from one function).
  explicit StaticKernelRegistration(const std::function<absl::Status(KernelRegistry&)>& fn);
};
}  // namespace internal

#define OFS_KERNEL_CONCAT_INNER_(a, b) a##b
#define OFS_KERNEL_CONCAT_(a, b) OFS_KERNEL_CONCAT_INNER_(a, b)

// OFS_REGISTER_KERNEL(op, device, fn[, {dtypes...}]): registers one kernel
// into KernelRegistry::Global() when the program starts.
#define OFS_REGISTER_KERNEL(...)                                    \
  static const ::oneflow_sbp::kernels::internal::StaticKernelRegistration \
      OFS_KERNEL_CONCAT_(ofs_static_kernel_registration_, __LINE__){__VA_ARGS__}

// OFS_REGISTER_KERNELS(fn): calls fn(KernelRegistry::Global()) at start-up;
// fn returns absl::Status (a family registering many kernels in a loop).
#define OFS_REGISTER_KERNELS(fn)                                    \
  static const ::oneflow_sbp::kernels::internal::StaticKernelRegistration \
      OFS_KERNEL_CONCAT_(ofs_static_kernel_family_, __LINE__){       \
          std::function<absl::Status(::oneflow_sbp::kernels::KernelRegistry&)>(fn)}

}  // namespace oneflow_sbp::kernels

#endif  // KERNELS_KERNEL_REGISTRY_H_
