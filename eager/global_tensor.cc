#include "eager/global_tensor.h"

#include "absl/strings/str_cat.h"
#include "eager/autograd.h"

namespace oneflow_sbp::eager {

GlobalTensor::GlobalTensor(TensorDesc desc, Placement placement, NdSbp nd_sbp, LocalTensor local)
    : impl_(std::make_shared<Impl>(Impl{InferInput(std::move(desc), nd_sbp),
                                        std::move(placement), std::move(local),
                                        std::make_unique<AutogradMeta>(),
                                        std::make_shared<const char>(0)})) {}

GlobalTensor GlobalTensor::SameValue(const GlobalTensor& source, Placement placement,
                                     NdSbp nd_sbp, LocalTensor local) {
  GlobalTensor t(source.desc(), std::move(placement), std::move(nd_sbp), std::move(local));
  t.impl_->value = source.impl_->value;
  return t;
}

bool GlobalTensor::requires_grad() const { return impl_->autograd->requires_grad; }

void GlobalTensor::set_requires_grad(bool requires_grad) {
  impl_->autograd->requires_grad = requires_grad;
}

GlobalTensor GlobalTensor::grad() const { return impl_->autograd->grad; }

AutogradMeta& GlobalTensor::autograd() const { return *impl_->autograd; }

std::string GlobalTensor::ToString() const {
  if (!defined()) return "undefined";
  return absl::StrCat(desc().ToString(), " ", nd_sbp().ToString(), " on ", placement().ToString());
}

}  // namespace oneflow_sbp::eager
