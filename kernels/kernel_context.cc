#include "kernels/kernel_context.h"

#include <utility>

#include "absl/strings/str_cat.h"
#include "comm/communicator.h"
#include "oneflow_sbp/values/attr_value.h"
#include "oneflow_sbp/values/quoted_input.h"
#include "oneflow_sbp/values/status_macros.h"

namespace oneflow_sbp::kernels {

LocalDims BlobLayout::local_dims() const {
  LocalDims dims;
  for (const IndexRange& r : slice.ranges()) dims.push_back(r.empty() ? 0 : r.size());
  return dims;
}

absl::StatusOr<std::vector<BlobLayout>> MakeBlobLayouts(
    const OpCall& call, const Placement& placement, int64_t parallel_id,
    absl::Span<const TensorDesc> logical_descs, const NdSbpSignature& signature) {
  const int n = call.num_blobs();
  if (static_cast<int>(logical_descs.size()) != n || static_cast<int>(signature.size()) != n) {
    return absl::InvalidArgumentError(absl::StrCat(
        call.type_name(), ": ", logical_descs.size(), " logical descs and ", signature.size(),
        " nd_sbps for ", n, " blobs (", call.ToString(), ")"));
  }
  std::vector<BlobLayout> layouts(n);
  for (int b = 0; b < n; ++b) {
    absl::StatusOr<TensorSlice> slice =
        RankSlice(logical_descs[b].shape, signature[b], placement, parallel_id);
    if (!slice.ok()) {
      return absl::InvalidArgumentError(absl::StrCat(call.type_name(), ": blob ", call.bn(b),
                                                     ": ", slice.status().message()));
    }
    layouts[b] = BlobLayout{logical_descs[b], signature[b], *std::move(slice)};
  }
  return layouts;
}

absl::StatusOr<std::vector<LocalTensor>> AllocateLocalOutputs(
    absl::Span<const BlobLayout> output_layouts, DeviceType device) {
  std::vector<LocalTensor> outputs;
  for (const BlobLayout& l : output_layouts) {
    OFS_ASSIGN_OR_RETURN(LocalTensor t, LocalTensor::Empty(l.logical.dtype, l.local_dims(),
        device));
    outputs.push_back(std::move(t));
  }
  return outputs;
}

KernelContext::KernelContext(std::shared_ptr<const OpCall> call, Placement placement,
                             int64_t parallel_id, std::vector<BlobLayout> layouts,
                             std::vector<LocalTensor> inputs, std::vector<LocalTensor> outputs)
    : call_(std::move(call)),
      placement_(std::move(placement)),
      parallel_id_(parallel_id),
      layouts_(std::move(layouts)),
      inputs_(std::move(inputs)),
      outputs_(std::move(outputs)) {}

absl::StatusOr<KernelContext> KernelContext::Make(std::shared_ptr<const OpCall> call,
                                                  const Placement& placement,
                                                  int64_t parallel_id,
                                                  absl::Span<const TensorDesc> logical_descs,
                                                  const NdSbpSignature& signature,
                                                  std::vector<LocalTensor> inputs,
                                                  std::vector<LocalTensor> outputs) {
  if (call == nullptr) return absl::InvalidArgumentError("KernelContext::Make: no op call");
  OFS_ASSIGN_OR_RETURN(std::vector<BlobLayout> layouts, MakeBlobLayouts(*call, placement,
      parallel_id, logical_descs, signature));
  return MakeWithLayouts(std::move(call), placement, parallel_id, std::move(layouts),
                         std::move(inputs), std::move(outputs));
}

absl::StatusOr<KernelContext> KernelContext::MakeWithLayouts(
    std::shared_ptr<const OpCall> call, const Placement& placement, int64_t parallel_id,
    std::vector<BlobLayout> layouts, std::vector<LocalTensor> inputs,
    std::vector<LocalTensor> outputs) {
  if (call == nullptr) return absl::InvalidArgumentError("KernelContext: no op call");
  const std::string& op = call->type_name();
  if (parallel_id < 0 || parallel_id >= placement.parallel_num()) {
    return absl::InvalidArgumentError(absl::StrCat(op, ": parallel_id ", parallel_id,
                                                   " is outside ", placement.ToString()));
  }
  if (static_cast<int>(layouts.size()) != call->num_blobs() ||
      static_cast<int>(inputs.size()) != call->num_inputs() ||
      static_cast<int>(outputs.size()) != call->num_outputs()) {
    return absl::InvalidArgumentError(absl::StrCat(
        op, ": ", layouts.size(), " layouts, ", inputs.size(), " inputs and ", outputs.size(),
        " outputs for ", call->ToString()));
  }
  for (int i = 0; i < call->num_inputs(); ++i) {
    const BlobLayout& l = layouts[i];
    const LocalTensor& t = inputs[i];
    if (!t.defined() || t.dtype() != l.logical.dtype || t.dims() != l.local_dims()) {
      return absl::InvalidArgumentError(absl::StrCat(
          op, ": local input ", call->bn(i), " is ",
          t.defined() ? absl::StrCat(DataTypeName(t.dtype()), DimsToString(t.dims()))
                      : "undefined",
          " but its layout ", l.logical.ToString(), " ", l.nd_sbp.ToString(), " gives rank ",
          parallel_id, " the slice ", l.slice.ToString(), " (",
          DataTypeName(l.logical.dtype), DimsToString(l.local_dims()), ")"));
    }
  }
  for (int i = 0; i < call->num_outputs(); ++i) {
    if (!outputs[i].defined()) {
      return absl::InvalidArgumentError(absl::StrCat(
          op, ": output ", call->bn(call->num_inputs() + i), " is not allocated"));
    }
  }
  return KernelContext(std::move(call), placement, parallel_id, std::move(layouts),
                       std::move(inputs), std::move(outputs));
}

std::string KernelContext::Prefix() const {
  return absl::StrCat(op_type(), " ", DeviceTypeName(device_type()), " kernel: ");
}

void KernelContext::RecordError(absl::Status status) const {
  if (status_.ok() && !status.ok()) status_ = std::move(status);
}

const LocalTensor& KernelContext::input(int i) const {
  if (i >= 0 && i < num_inputs()) return inputs_[i];
  RecordError(Internal(absl::StrCat("asked for input ", i, " of ", num_inputs())));
  stand_in_ = LocalTensor();
  return stand_in_;
}

LocalTensor& KernelContext::output(int i) {
  if (i >= 0 && i < num_outputs()) return outputs_[i];
  RecordError(Internal(absl::StrCat("asked for output ", i, " of ", num_outputs())));
  stand_in_ = LocalTensor();
  return stand_in_;
}

const LocalTensor& KernelContext::input(absl::string_view arg, int index) const {
  const int blob = call_->InputBlob(arg, index);
  if (blob >= 0) return inputs_[blob];
  RecordError(Internal(absl::StrCat("asked for input ", arg, "_", index,
                                    ", which this call does not have (", call_->ToString(),
                                    ")")));
  stand_in_ = LocalTensor();
  return stand_in_;
}

LocalTensor& KernelContext::output(absl::string_view arg, int index) {
  const int blob = call_->OutputBlob(arg, index);
  if (blob >= 0) return outputs_[blob - num_inputs()];
  RecordError(Internal(absl::StrCat("asked for output ", arg, "_", index,
                                    ", which this call does not have (", call_->ToString(),
                                    ")")));
  stand_in_ = LocalTensor();
  return stand_in_;
}

const BlobLayout& KernelContext::layout(int blob) const {
  if (blob >= 0 && blob < static_cast<int>(layouts_.size())) return layouts_[blob];
  RecordError(Internal(absl::StrCat("asked for the layout of blob ", blob, " of ",
                                    layouts_.size())));
  return stand_in_layout_;
}

std::string KernelContext::input_bn(int i) const {
  return i >= 0 && i < num_inputs() ? call_->bn(i) : absl::StrCat("input#", i);
}

std::string KernelContext::output_bn(int i) const {
  return i >= 0 && i < num_outputs() ? call_->bn(num_inputs() + i) : absl::StrCat("output#", i);
}

absl::Status KernelContext::CheckOutput(int i, absl::Span<const int64_t> dims,
                                        DataType dtype) const {
  if (i < 0 || i >= num_outputs()) {
    return Internal(absl::StrCat("checked output ", i, " of ", num_outputs()));
  }
  const LocalTensor& out = outputs_[i];
  if (out.dtype() == dtype && out.dims() == LocalDims(dims.begin(), dims.end())) {
    return absl::OkStatus();
  }
  const BlobLayout& l = layouts_[num_inputs() + i];
  return Internal(absl::StrCat(
      "preallocated ", output_bn(i), " is ", DataTypeName(out.dtype()), DimsToString(out.dims()),
      " but the kernel computes ", DataTypeName(dtype), DimsToString(dims),
      " from its local inputs (", output_bn(i), " ", l.logical.ToString(), " ",
      l.nd_sbp.ToString(), ", rank ", parallel_id_, " slice ", l.slice.ToString(), ")"));
}

absl::Status KernelContext::UnsupportedDtype(DataType dtype, absl::string_view bn) const {
  return absl::UnimplementedError(absl::StrCat("no ", DeviceTypeName(device_type()),
                                               " kernel for op ", QuotedInput(op_type()), " with dtype ",
                                               DataTypeName(dtype), " (", bn, ")"));
}

absl::Status KernelContext::Internal(absl::string_view message) const {
  return absl::InternalError(absl::StrCat(Prefix(), message));
}

absl::Status KernelContext::InvalidArgument(absl::string_view message) const {
  return absl::InvalidArgumentError(absl::StrCat(Prefix(), message));
}

absl::Status KernelContext::Unimplemented(absl::string_view message) const {
  return absl::UnimplementedError(absl::StrCat(Prefix(), message));
}

absl::Status KernelContext::FailedPrecondition(absl::string_view message) const {
  return absl::FailedPreconditionError(absl::StrCat(Prefix(), message));
}

absl::Status KernelContext::Annotate(const absl::Status& status) const {
  if (status.ok()) return status;
  return absl::Status(status.code(), absl::StrCat(Prefix(), status.message()));
}

// ------------------------------------------------------------ Collectives

absl::Status KernelContext::SetWorld(comm::Communicator* world) {
  if (world != nullptr) {
    const int64_t rank = placement_.RankOf(parallel_id_);
    const int64_t last = placement_.ranks().back();
    if (world->rank() != rank || world->size() <= last) {
      return InvalidArgument(absl::StrCat(
          "the world communicator is ", world->DebugName(), " but parallel_id ", parallel_id_,
          " of ", placement_.ToString(), " is device rank ", rank,
          " and the world must hold every rank up to ", last));
    }
  }
  world_ = world;
  return absl::OkStatus();
}

MeshAxisMask KernelContext::SplitAxes(int blob, int dim) const {
  if (blob < 0 || blob >= static_cast<int>(layouts_.size())) return 0;
  const NdSbp& nd = layouts_[blob].nd_sbp;
  MeshAxisMask axes = 0;
  for (int a = 0; a < nd.size(); ++a) {
    if (nd[a].is_split() && nd[a].split_axis() == dim) axes |= AxisBit(a);
  }
  return axes;
}

absl::StatusOr<std::shared_ptr<comm::Communicator>> KernelContext::SplitGroup(int blob,
                                                                              int dim) const {
  const BlobLayout& l = layout(blob);
  const std::string bn = blob < num_inputs() ? input_bn(blob) : output_bn(blob - num_inputs());
  if (world_ == nullptr) {
    return FailedPrecondition(absl::StrCat(
        "this layout needs a communicator: ", bn, " ", l.logical.ToString(), " ",
        l.nd_sbp.ToString(), " on ", placement_.ToString(), " splits dim ", dim,
        ", which the kernel reduces over across ranks; the caller passed none "
        "(KernelContext::SetWorld; the shard harness passes one with ranks_as_threads)"));
  }
  std::vector<int> ranks;
  for (int64_t r : placement_.ranks()) ranks.push_back(static_cast<int>(r));
  // The placement's group: its positions are parallel_ids (ranks ascend).
  absl::StatusOr<std::shared_ptr<comm::Communicator>> group = world_->SubGroup(ranks);
  if (!group.ok()) return Annotate(group.status());
  return Annotate((*group)->ForMeshAxes(placement_.hierarchy(), SplitAxes(blob, dim)));
}

// ------------------------------------------------------------------- Attr

namespace {

template <typename T>
struct AttrTraits;
template <> struct AttrTraits<int64_t> {
  static constexpr AttrType kType = AttrType::kInt;
  static int64_t Get(const AttrValue& v) { return v.i(); }
};
template <> struct AttrTraits<int> {
  static constexpr AttrType kType = AttrType::kInt;
  static int Get(const AttrValue& v) { return static_cast<int>(v.i()); }
};
template <> struct AttrTraits<double> {
  static constexpr AttrType kType = AttrType::kFloat;
  static double Get(const AttrValue& v) {
    return v.type() == AttrType::kInt ? static_cast<double>(v.i()) : v.f();
  }
};
template <> struct AttrTraits<bool> {
  static constexpr AttrType kType = AttrType::kBool;
  static bool Get(const AttrValue& v) { return v.b(); }
};
template <> struct AttrTraits<std::string> {
  static constexpr AttrType kType = AttrType::kString;
  static std::string Get(const AttrValue& v) { return v.s(); }
};
template <> struct AttrTraits<std::vector<int64_t>> {
  static constexpr AttrType kType = AttrType::kInts;
  static std::vector<int64_t> Get(const AttrValue& v) { return v.ints(); }
};

template <typename T>
T ReadAttr(const KernelContext& ctx, absl::string_view name) {
  const AttrValue* v = ctx.op().attrs().Find(name);
  const AttrType want = AttrTraits<T>::kType;
  if (v == nullptr) {
    ctx.RecordError(ctx.Internal(absl::StrCat("attribute ", QuotedInput(name), " (", AttrTypeName(want),
                                              ") is missing from ", ctx.op().ToString())));
    return T{};
  }
  const bool int_as_float = want == AttrType::kFloat && v->type() == AttrType::kInt;
  if (v->type() != want && !int_as_float) {
    ctx.RecordError(ctx.Internal(absl::StrCat("attribute ", QuotedInput(name), " is ",
                                              AttrTypeName(v->type()), " ", QuotedInput(v->ToString()),
                                              " but the kernel reads it as ",
                                              AttrTypeName(want))));
    return T{};
  }
  return AttrTraits<T>::Get(*v);
}

}  // namespace

template <>
int64_t KernelContext::Attr<int64_t>(absl::string_view name) const {
  return ReadAttr<int64_t>(*this, name);
}
template <>
int KernelContext::Attr<int>(absl::string_view name) const {
  return ReadAttr<int>(*this, name);
}
template <>
double KernelContext::Attr<double>(absl::string_view name) const {
  return ReadAttr<double>(*this, name);
}
template <>
bool KernelContext::Attr<bool>(absl::string_view name) const {
  return ReadAttr<bool>(*this, name);
}
template <>
std::string KernelContext::Attr<std::string>(absl::string_view name) const {
  return ReadAttr<std::string>(*this, name);
}
template <>
std::vector<int64_t> KernelContext::Attr<std::vector<int64_t>>(absl::string_view name) const {
  return ReadAttr<std::vector<int64_t>>(*this, name);
}

}  // namespace oneflow_sbp::kernels
