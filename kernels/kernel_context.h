// KernelContext: everything a kernel sees when it runs an op on ONE rank.
//
// Example (what a caller such as the eager interpreter or the shard
// harness does for rank `pid` of a placement, with the signature the engine
// chose):
//   absl::StatusOr<KernelContext> ctx = KernelContext::Make(
//       call, placement, pid, logical_descs /* every blob */, signature,
//       local_inputs, AllocateLocalOutputs(...));
//   absl::Status s = RunKernel(*ctx);          // kernel_registry.h
//
// And inside a kernel:
//   const LocalTensor& x = ctx.input(0);              // or ctx.input("x")
//   LocalTensor& y = ctx.output(0);
//   OFS_RETURN_IF_ERROR(ctx.CheckOutput(0, x.dims(), x.dtype()));
//   const double alpha = ctx.Attr<double>("alpha");
//
// The contract between caller and kernel:
// * Blobs are numbered as in OpCall: inputs in declared order, then
//   outputs. input(i) is blob i, output(i) is blob num_inputs() + i.
// * Per blob the context carries its BlobLayout: the LOGICAL desc (global
//   shape and dtype), its NdSbp, and this rank's TensorSlice (the global
//   index range of every dim this rank holds; the full range on B and P
//   mesh axes, possibly empty on split ones).
// * Inputs are this rank's local shards: dims equal the slice sizes and
//   the dtype is the logical one (Make checks both). On a P mesh axis an
//   input holds an addend; kernels apply the op to their local addends,
//   which is exact because rules only allow P where the op is linear.
// * Outputs are PRE-ALLOCATED by the caller with this rank's local shape:
//   the slice sizes of the output's logical shape under its NdSbp (for a P
//   output, the full logical extent on that axis). Their contents are
//   undefined on entry; a kernel writes every element. A kernel must check
//   the dims it was given against the dims it computes from its local
//   inputs (CheckOutput), and return kInternal on a mismatch: that is how
//   a rule and a kernel that disagree get caught.
// * Kernels whose result depends on where the shard sits globally (slice
//   to P, slice_update, dropout's mask) read slices and logical descs;
//   elementwise kernels do not need to.
// * Nothing here aborts on a kernel's or caller's mistake: a missing or
//   mistyped attribute, or a blob the op lacks, is recorded in status()
//   (kInternal, naming op, kernel and what was asked) and a stand-in is
//   returned; RunKernel reports it.
// * Collectives are optional. Most layouts let every rank compute on its
//   own; a few cannot (sparse_softmax_cross_entropy_ms with the class dim
//   split needs the max and the sum of exp over the whole row, as
//   Megatron's vocab-parallel cross entropy). For those the caller passes
//   this rank's WORLD communicator (SetWorld; world position == device
//   rank), and the kernel asks for the group it must reduce over
//   (SplitGroup). Without a world such a kernel returns
//   kFailedPrecondition saying that its layout needs one:
//     OFS_ASSIGN_OR_RETURN(std::shared_ptr<comm::Communicator> g,
//                          ctx.SplitGroup(/*blob=*/0, /*dim=*/rank - 1));
//     OFS_RETURN_IF_ERROR(ctx.Annotate(g->AllReduce(buf, buf, n, dtype, max)));
#ifndef KERNELS_KERNEL_CONTEXT_H_
#define KERNELS_KERNEL_CONTEXT_H_

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "absl/types/span.h"
#include "oneflow_sbp/storage/local_tensor.h"
#include "oneflow_sbp/values/nd_sbp.h"
#include "oneflow_sbp/rule_api/op_call.h"
#include "oneflow_sbp/values/placement.h"
#include "oneflow_sbp/rule_api/sbp_signature.h"
#include "oneflow_sbp/values/tensor_desc.h"
#include "oneflow_sbp/values/tensor_slice_view.h"

namespace oneflow_sbp::comm {
class Communicator;  // comm/communicator.h
}  // namespace oneflow_sbp::comm

namespace oneflow_sbp::kernels {

// How one blob is laid out, seen from one rank.
struct BlobLayout {
  TensorDesc logical;
  NdSbp nd_sbp;
  TensorSlice slice;

  // The slice's range sizes: the local shard's dims.
  LocalDims local_dims() const;
  // True if some mesh axis is P: the local tensor is an addend.
  bool is_partial() const { return nd_sbp.any_partial_sum(); }
};

// The layouts of every blob of `call` (blob order) on `parallel_id`.
// kInvalidArgument if the counts differ from the call's blob count or an
// NdSbp does not fit its shape or the placement (ValidateNdSbp).
absl::StatusOr<std::vector<BlobLayout>> MakeBlobLayouts(
    const OpCall& call, const Placement& placement, int64_t parallel_id,
    absl::Span<const TensorDesc> logical_descs, const NdSbpSignature& signature);

// One uninitialised local tensor per layout, shaped local_dims() and typed
// with the logical dtype: what a caller passes as a kernel's outputs.
absl::StatusOr<std::vector<LocalTensor>> AllocateLocalOutputs(
    absl::Span<const BlobLayout> output_layouts, DeviceType device = DeviceType::kCpu);

class KernelContext {
 public:
  // The checked way to build a context: computes every blob's layout
  // (MakeBlobLayouts) and checks that inputs match their layouts (dims ==
  // slice sizes, dtype == logical dtype) and that there is one defined
  // output per output blob. Errors are kInvalidArgument naming the op and
  // the blob. Output dims are NOT checked here: kernels check them.
  static absl::StatusOr<KernelContext> Make(std::shared_ptr<const OpCall> call,
                                            const Placement& placement, int64_t parallel_id,
                                            absl::Span<const TensorDesc> logical_descs,
                                            const NdSbpSignature& signature,
                                            std::vector<LocalTensor> inputs,
                                            std::vector<LocalTensor> outputs);

  // The same with layouts the caller computed already. Checks as Make.
  static absl::StatusOr<KernelContext> MakeWithLayouts(std::shared_ptr<const OpCall> call,
                                                       const Placement& placement,
                                                       int64_t parallel_id,
                                                       std::vector<BlobLayout> layouts,
                                                       std::vector<LocalTensor> inputs,
                                                       std::vector<LocalTensor> outputs);

  const OpCall& op() const { return *call_; }
  const std::string& op_type() const { return call_->type_name(); }
  const Placement& placement() const { return placement_; }
  DeviceType device_type() const { return placement_.device_type(); }
  int64_t parallel_id() const { return parallel_id_; }

  int num_inputs() const { return call_->num_inputs(); }
  int num_outputs() const { return call_->num_outputs(); }

  // Positional access. An index out of range is recorded (kInternal) and
  // an undefined stand-in (no elements) is returned.
  const LocalTensor& input(int i) const;
  LocalTensor& output(int i);
  // By (arg, index), like SbpContext. A blob the call lacks (undeclared
  // arg, absent optional input) is recorded and a stand-in returned; test
  // optional inputs with has_input first.
  const LocalTensor& input(absl::string_view arg, int index = 0) const;
  LocalTensor& output(absl::string_view arg, int index = 0);
  bool has_input(absl::string_view arg, int index = 0) const {
    return call_->InputBlob(arg, index) >= 0;
  }

  // Layouts by blob index (inputs then outputs) and positionally.
  const BlobLayout& layout(int blob) const;
  const BlobLayout& input_layout(int i) const { return layout(i); }
  const BlobLayout& output_layout(int i) const { return layout(num_inputs() + i); }
  // "x_0": the blob name of input / output i, for messages.
  std::string input_bn(int i) const;
  std::string output_bn(int i) const;

  // The attribute's value. T is int64_t, int, double, bool, std::string or
  // std::vector<int64_t> (a double also reads an int attribute). A missing
  // or differently typed attribute is recorded (kInternal naming op,
  // kernel and attribute) and T{} is returned.
  template <typename T>
  T Attr(absl::string_view name) const;

  // kInternal unless output i has exactly `dims` and `dtype`: "abs cpu
  // kernel: preallocated y_0 is f32[4,3] but the kernel computes f32[4,2]
  // from its local inputs". Kernels call it before writing.
  absl::Status CheckOutput(int i, absl::Span<const int64_t> dims, DataType dtype) const;

  // Status constructors whose messages start with "<op> <device> kernel: ".
  // UnsupportedDtype is kUnimplemented: "no cpu kernel for op 'abs' with
  // dtype bool (x_0)".
  absl::Status UnsupportedDtype(DataType dtype, absl::string_view bn) const;
  absl::Status Internal(absl::string_view message) const;
  absl::Status InvalidArgument(absl::string_view message) const;
  absl::Status Unimplemented(absl::string_view message) const;
  absl::Status FailedPrecondition(absl::string_view message) const;
  // `status` with the same code and the prefix added (OK stays OK); for
  // errors from shared helpers such as attribute normalisation.
  absl::Status Annotate(const absl::Status& status) const;
  template <typename T>
  absl::StatusOr<T> Annotate(absl::StatusOr<T> value) const {
    if (value.ok()) return value;
    return Annotate(value.status());
  }

  // ---- Collectives (see the header comment) ----

  // This rank's world communicator, not owned; it must outlive every use
  // of the context. Its position must be this rank's device rank
  // (placement().RankOf(parallel_id())), and the world must hold every
  // rank of the placement (it may hold more): kInvalidArgument otherwise.
  // nullptr clears it.
  absl::Status SetWorld(comm::Communicator* world);
  comm::Communicator* world() const { return world_; }

  // The mesh axes on which blob `blob` is split on its dim `dim` (0 when
  // none is, or for a bad blob or dim).
  MeshAxisMask SplitAxes(int blob, int dim) const;

  // The ranks that share every mesh coordinate with this rank except on
  // SplitAxes(blob, dim): the ranks that hold the other parts of this
  // rank's block of `blob` along `dim`, in mesh order (position == the
  // rank's index among them, so parts come in dim order). Made from the
  // world as world.SubGroup(placement ranks).ForMeshAxes(hierarchy, axes)
  // and cached by the communicator, so every rank of the group gets the
  // same group. A group of one rank when no axis splits the dim.
  // kFailedPrecondition without a world ("... needs a communicator"),
  // naming the blob and its layout; communicator errors pass through with
  // the kernel prefix.
  absl::StatusOr<std::shared_ptr<comm::Communicator>> SplitGroup(int blob, int dim) const;

  // OK unless a misuse was recorded (the first one is kept).
  const absl::Status& status() const { return status_; }
  void RecordError(absl::Status status) const;

 private:
  KernelContext(std::shared_ptr<const OpCall> call, Placement placement, int64_t parallel_id,
                std::vector<BlobLayout> layouts, std::vector<LocalTensor> inputs,
                std::vector<LocalTensor> outputs);
  std::string Prefix() const;

  std::shared_ptr<const OpCall> call_;
  Placement placement_;
  int64_t parallel_id_;
  std::vector<BlobLayout> layouts_;
  std::vector<LocalTensor> inputs_;
  std::vector<LocalTensor> outputs_;
  comm::Communicator* world_ = nullptr;
  // Recorded misuse. Mutable so that const accessors can record.
  mutable absl::Status status_;
  // Returned for misuse, never written through by a correct kernel.
  mutable LocalTensor stand_in_;
  BlobLayout stand_in_layout_;
};

template <> int64_t KernelContext::Attr<int64_t>(absl::string_view name) const;
template <> int KernelContext::Attr<int>(absl::string_view name) const;
template <> double KernelContext::Attr<double>(absl::string_view name) const;
template <> bool KernelContext::Attr<bool>(absl::string_view name) const;
template <> std::string KernelContext::Attr<std::string>(absl::string_view name) const;
template <>
std::vector<int64_t> KernelContext::Attr<std::vector<int64_t>>(absl::string_view name) const;

}  // namespace oneflow_sbp::kernels

#endif  // KERNELS_KERNEL_CONTEXT_H_
