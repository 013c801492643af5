// GlobalTensor: a logical tensor laid out over a placement, as one rank of
// an SPMD program sees it: the logical desc, the placement, the nd_sbp, and
// this rank's local shard.
//
// Example (every rank of "cpu:0-3 [2,2]" runs the same code):
//   GlobalTensor x = *FromFull(ctx, full_x, placement, *NdSbp::Parse("(S(0),B)"));
//   x.shape();        // [8,6] (logical)
//   x.local().dims(); // this rank's shard, e.g. [4,6]
//
// A GlobalTensor is a shared handle (copies share the shard and the
// autograd state), like torch.Tensor. The metadata is immutable; only
// in-place ops (optimizer updates) write into the shard. A rank outside
// the placement holds no shard (local() is undefined) but knows the
// metadata, so every rank can run the same program.
//
// `meta()` is the InferInput the engine keys inference on, built once with
// its hash: an op call on cached layouts combines precomputed hashes only.
#ifndef EAGER_GLOBAL_TENSOR_H_
#define EAGER_GLOBAL_TENSOR_H_

#include <memory>
#include <string>

#include "oneflow_sbp/inference/infer_types.h"
#include "oneflow_sbp/storage/local_tensor.h"
#include "oneflow_sbp/values/nd_sbp.h"
#include "oneflow_sbp/values/placement.h"
#include "oneflow_sbp/values/tensor_desc.h"

namespace oneflow_sbp::eager {

struct AutogradMeta;

class GlobalTensor {
 public:
  // Undefined (no metadata).
  GlobalTensor() = default;
  // Requires `local` to be this rank's shard of `desc` as `nd_sbp` on
  // `placement` (or undefined on ranks outside it); the factories in
  // tensor_layout.h check it, this constructor does not.
  GlobalTensor(TensorDesc desc, Placement placement, NdSbp nd_sbp, LocalTensor local);

  bool defined() const { return impl_ != nullptr; }
  const TensorDesc& desc() const { return impl_->meta.desc(); }
  const Shape& shape() const { return desc().shape; }
  DataType dtype() const { return desc().dtype; }
  const Placement& placement() const { return impl_->placement; }
  const NdSbp& nd_sbp() const { return impl_->meta.nd_sbp(); }
  const InferInput& meta() const { return impl_->meta; }
  // This rank's shard; undefined outside the placement.
  const LocalTensor& local() const { return impl_->local; }
  LocalTensor& mutable_local() { return impl_->local; }

  // Autograd (autograd.h): leaves that require grad collect one.
  bool requires_grad() const;
  void set_requires_grad(bool requires_grad);
  // The gradient after Backward, laid out as this tensor; undefined before.
  GlobalTensor grad() const;
  AutogradMeta& autograd() const;

  // Identity: two handles of one tensor.
  bool SameTensorAs(const GlobalTensor& other) const { return impl_ == other.impl_; }
  const void* id() const { return impl_.get(); }
  // Identity of the logical value: a handle made from another by Detach or
  // Redistribute (same values, another handle or layout) shares its
  // source's, so the program recorder sees one tensor where autograd and
  // boxing made several handles. Otherwise unique per handle.
  const void* value_id() const { return impl_->value.get(); }
  // A new handle (no autograd state) holding `source`'s value as `nd_sbp`
  // on `placement` with this rank's `local`: value_id() is source's.
  static GlobalTensor SameValue(const GlobalTensor& source, Placement placement, NdSbp nd_sbp,
                                LocalTensor local);
  // Observes the tensor without keeping it alive (the tape refers to the
  // outputs it produced this way, so tensors and nodes form no cycle).
  std::weak_ptr<const void> weak_id() const { return impl_; }

  // "f32[8,6] (S(0), B) on cpu:0-3 [2,2]".
  std::string ToString() const;

 private:
  struct Impl {
    InferInput meta;
    Placement placement;
    LocalTensor local;
    std::unique_ptr<AutogradMeta> autograd;
    // A token per logical value (shared by handles of one value); a token
    // rather than the source's Impl, which would keep the source alive and
    // close a cycle through the tape.
    std::shared_ptr<const char> value;
  };
  std::shared_ptr<Impl> impl_;
};

}  // namespace oneflow_sbp::eager

#endif  // EAGER_GLOBAL_TENSOR_H_
