#include "eager/eager_context.h"

#include "absl/strings/str_cat.h"
#include "eager/backward_rules.h"
#include "oneflow_sbp/values/status_macros.h"

namespace oneflow_sbp::eager {

namespace {
void RegisterRulesOnce() {
  static const absl::Status registered = RegisterBuiltinBackwardRules();
  (void)registered;  // kAlreadyExists only if an application registered first
}
}  // namespace

EagerContext::EagerContext(engine::Engine& engine, comm::Communicator& world, EagerOptions options)
    : engine_(engine),
      world_(world),
      options_(std::move(options)),
      kernels_(options_.kernels != nullptr ? options_.kernels
                                           : &kernels::KernelRegistry::Global()),
      trace_(world.rank()) {
  RegisterRulesOnce();
}

comm::CallOptions EagerContext::call_options() const {
  comm::CallOptions o;
  o.timeout = options_.timeout;
  return o;
}

absl::StatusOr<std::shared_ptr<const OpCall>> EagerContext::Call(absl::string_view op,
                                                                 int num_inputs,
                                                                 const AttrMap& attrs) {
  std::string key = absl::StrCat(op, "/", num_inputs, "/", attrs.ToString());
  auto it = calls_.find(key);
  if (it != calls_.end()) return it->second;
  OFS_ASSIGN_OR_RETURN(std::shared_ptr<const OpCall> call, engine_.MakeCall(op, num_inputs, attrs));
  calls_.emplace(std::move(key), call);
  return call;
}

}  // namespace oneflow_sbp::eager
