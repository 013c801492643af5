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
//
// Aliases: another name users type for a registered op (OneFlow's `concat`
// for our `cat`). An alias resolves to the canonical OpDef, so Find, Get and
// everything built on them (Engine::MakeCall, `sbp infer --op=`) accept it,
// and the call, its results and its cache key carry the canonical name.
// OpNames() stays canonical (one entry per OpDef); Aliases() lists aliases.
//   registry.RegisterAlias("concat", "cat");
//   registry.Find("concat")->type_name() == "cat"
//
// An alias may also rename attributes, where another framework names the
// same attribute differently (PyTorch's unsqueeze(dim) is expand_dims(axis)).
// Calls made by name with attributes go through ResolveCall, which turns
// the alias's attribute names into the op's; the op's own names are then
// errors on the alias (each name means one thing per name typed).
//   registry.RegisterAlias("unsqueeze", "expand_dims", {{"dim", "axis"}});
//   registry.ResolveCall("unsqueeze", {dim=1}) -> expand_dims, {axis=1}
#ifndef ONEFLOW_SBP_RULE_API_OP_REGISTRY_H_
#define ONEFLOW_SBP_RULE_API_OP_REGISTRY_H_

#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "absl/base/thread_annotations.h"
#include "absl/container/flat_hash_map.h"
#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "absl/synchronization/mutex.h"
#include "oneflow_sbp/rule_api/op_def.h"

namespace oneflow_sbp {

// An attribute an alias names differently from its op.
struct AliasAttr {
  std::string name;     // the alias's name, e.g. "dim"
  std::string op_name;  // the op's, e.g. "axis"
  // For the reduction axes of a list attribute: an empty list reduces
  // every axis under the alias (PyTorch's mean(x, dim=[])) and none under
  // the op (reduce_mean with axis=[]), so the alias rejects it.
  bool non_empty = false;
};

// An op definition and attributes in its own names: what a name typed by
// a user, with attributes in that name's terms, calls.
struct ResolvedCall {
  std::shared_ptr<const OpDef> def;
  AttrMap attrs;
};

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
  // Sorted canonical names; aliases are not listed.
  std::vector<std::string> OpNames() const;

  // Makes `alias` another name of the registered op `canonical`. Errors
  // (each naming both names): kInvalidArgument if `alias` is empty or equal
  // to `canonical`; kAlreadyExists if `alias` is already an op or an alias
  // (an alias never shadows an op, nor is one re-pointed); kNotFound if
  // `canonical` is not a registered op; kInvalidArgument if `canonical` is
  // itself an alias (aliases point at canonical names only, so there are no
  // chains to follow).
  //
  // `renamed` lists the attributes the alias names differently; the others
  // keep the op's names. kInvalidArgument (naming the alias, the op and the
  // attribute) if a renamed attribute is not one of the op's, is renamed
  // twice, takes a name the op already uses for another attribute or that
  // two attributes share, or is non_empty but not a list of ints.
  absl::Status RegisterAlias(absl::string_view alias, absl::string_view canonical,
                             std::vector<AliasAttr> renamed = {});
  // (alias, canonical name) pairs sorted by alias.
  std::vector<std::pair<std::string, std::string>> Aliases() const;
  // The sorted aliases of the op named `canonical`; empty if it has none
  // (or is not a canonical name).
  std::vector<std::string> AliasesOf(absl::string_view canonical) const;
  // The attributes `alias` renames, in registration order; empty for an
  // alias that keeps the op's names, an op's own name or an unknown name.
  std::vector<AliasAttr> RenamedAttrsOf(absl::string_view alias) const;
  // The op's name for attribute `attr` as `name` (an op or an alias) calls
  // it: the renamed one for an alias's renamed attribute, else `attr`.
  std::string OpAttrName(absl::string_view name, absl::string_view attr) const;

  // The op `name` calls and `attrs` in the op's attribute names. For an
  // op's own name, `attrs` unchanged (OpCall::Make checks them). For an
  // alias, every attribute is checked here, in the alias's terms:
  // kInvalidArgument "unsqueeze (alias of expand_dims): ..." for an unknown
  // name (the op's own name for a renamed attribute says which name the
  // alias uses), a value of the wrong type, a missing required attribute,
  // or an empty list where the alias rejects one. Unknown `name`: Get's
  // kNotFound.
  absl::StatusOr<ResolvedCall> ResolveCall(absl::string_view name, const AttrMap& attrs) const;

 private:
  struct AliasEntry {
    std::string canonical;  // a key of ops_
    std::vector<AliasAttr> renamed;
  };
  mutable absl::Mutex mu_;
  absl::flat_hash_map<std::string, std::shared_ptr<const OpDef>> ops_
      ABSL_GUARDED_BY(mu_);
  // alias -> its op; disjoint from ops_'s keys.
  absl::flat_hash_map<std::string, AliasEntry> aliases_ ABSL_GUARDED_BY(mu_);
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

#endif  // ONEFLOW_SBP_RULE_API_OP_REGISTRY_H_
