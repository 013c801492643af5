// OpRegistry: op type name -> OpDef.
//
// Example (a user's custom op, registered from outside the library):
//   OFS_REGISTER_OP(OpDefBuilder("my_scale")
//                       .Input("x").Output("y")
//                       .SetShapeFn(...)
//                       .SetGetSbpFn([](SbpContext& ctx) {
//                         return SplitForEachAxis(ctx);
//                       }));
//   std::shared_ptr<const OpDef> def = OpRegistry::Global().Find("my_scale");
//
// Built-in ops are added by ops::RegisterBuiltinOps (ops/builtin_ops.h);
// the core library knows none of them. Registries are thread-safe;
// definitions are immutable once registered and never removed.
#ifndef ONEFLOW_SBP_OP_REGISTRY_H_
#define ONEFLOW_SBP_OP_REGISTRY_H_

#include <memory>
#include <string>
#include <vector>

#include "absl/base/thread_annotations.h"
#include "absl/container/flat_hash_map.h"
#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/synchronization/mutex.h"
#include "oneflow_sbp/op_def.h"

namespace oneflow_sbp {

class OpRegistry {
 public:
  OpRegistry() = default;
  OpRegistry(const OpRegistry&) = delete;
  OpRegistry& operator=(const OpRegistry&) = delete;

  // The process-wide registry used by the `sbp` tool and OFS_REGISTER_OP.
  static OpRegistry& Global();

  // kAlreadyExists if the name is taken.
  absl::Status Register(OpDef def);
  // Builds and registers; Build() errors pass through.
  absl::Status Register(const OpDefBuilder& builder);

  // nullptr if unknown.
  std::shared_ptr<const OpDef> Find(absl::string_view type_name) const;
  // kNotFound "unknown op 'x'" with close names suggested.
  absl::StatusOr<std::shared_ptr<const OpDef>> Get(absl::string_view type_name) const;
  // Sorted.
  std::vector<std::string> OpNames() const;

 private:
  mutable absl::Mutex mu_;
  absl::flat_hash_map<std::string, std::shared_ptr<const OpDef>> ops_
      ABSL_GUARDED_BY(mu_);
};

namespace internal {
// Registers at static-initialisation time; a definition that fails to
// build is a bug in the program defining it, so it aborts with the reason.
struct StaticOpRegistration {
  explicit StaticOpRegistration(const OpDefBuilder& builder);
};
}  // namespace internal

#define OFS_REGISTER_OP_CONCAT_INNER_(a, b) a##b
#define OFS_REGISTER_OP_CONCAT_(a, b) OFS_REGISTER_OP_CONCAT_INNER_(a, b)
// Registers an op into OpRegistry::Global() when the program starts. The
// defining cc_library needs `alwayslink = True` so the linker keeps it.
#define OFS_REGISTER_OP(builder)                                   \
  static const ::oneflow_sbp::internal::StaticOpRegistration      \
      OFS_REGISTER_OP_CONCAT_(ofs_static_op_registration_, __LINE__)(builder)

}  // namespace oneflow_sbp

#endif  // ONEFLOW_SBP_OP_REGISTRY_H_
