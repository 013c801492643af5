#include "oneflow_sbp/rule_api/sbp_context.h"

#include "absl/strings/str_cat.h"

namespace oneflow_sbp {

SbpSignatureBuilder::SbpSignatureBuilder(SbpContext* ctx)
    : ctx_(ctx), sig_(ctx->call_.num_blobs()) {}

SbpSignatureBuilder& SbpSignatureBuilder::Set(const OpArg& arg, SbpParallel sbp) {
  const OpCall& call = ctx_->call_;
  int blob = call.InputBlob(arg.name, arg.index);
  if (blob < 0) blob = call.OutputBlob(arg.name, arg.index);
  if (blob >= 0) {
    sig_[blob] = sbp;
    return *this;
  }
  const int in = call.def().FindInput(arg.name);
  if (in >= 0 && call.def().inputs()[in].optional && call.input_counts()[in] == 0) {
    return *this;  // absent optional input: not recorded (SPEC.md §9 #16)
  }
  ctx_->RecordRuleBug(absl::StrCat("rule names blob ", arg.name, "_", arg.index,
                                   ", which this call does not have"));
  return *this;
}

SbpSignatureBuilder& SbpSignatureBuilder::Split(const OpArg& arg, int axis) {
  if (axis < 0 || axis > SbpParallel::kMaxSplitAxis) {
    ctx_->RecordRuleBug(absl::StrCat("rule splits ", arg.name, "_", arg.index,
                                     " on axis ", axis));
    return *this;
  }
  return Set(arg, SbpParallel::Split(axis));
}
SbpSignatureBuilder& SbpSignatureBuilder::Split(absl::Span<const OpArg> args,
                                                int axis) {
  for (const OpArg& a : args) Split(a, axis);
  return *this;
}
SbpSignatureBuilder& SbpSignatureBuilder::Split(std::initializer_list<OpArg> args,
                                                int axis) {
  return Split(absl::MakeConstSpan(args.begin(), args.size()), axis);
}
SbpSignatureBuilder& SbpSignatureBuilder::Broadcast(const OpArg& arg) {
  return Set(arg, SbpParallel::Broadcast());
}
SbpSignatureBuilder& SbpSignatureBuilder::Broadcast(absl::Span<const OpArg> args) {
  for (const OpArg& a : args) Broadcast(a);
  return *this;
}
SbpSignatureBuilder& SbpSignatureBuilder::Broadcast(std::initializer_list<OpArg> args) {
  return Broadcast(absl::MakeConstSpan(args.begin(), args.size()));
}
SbpSignatureBuilder& SbpSignatureBuilder::PartialSum(const OpArg& arg) {
  return Set(arg, SbpParallel::PartialSum());
}
SbpSignatureBuilder& SbpSignatureBuilder::PartialSum(absl::Span<const OpArg> args) {
  for (const OpArg& a : args) PartialSum(a);
  return *this;
}
SbpSignatureBuilder& SbpSignatureBuilder::PartialSum(
    std::initializer_list<OpArg> args) {
  return PartialSum(absl::MakeConstSpan(args.begin(), args.size()));
}
SbpSignatureBuilder& SbpSignatureBuilder::Partial(const OpArg& arg, PartialKind kind) {
  return Set(arg, SbpParallel::Partial(kind));
}
SbpSignatureBuilder& SbpSignatureBuilder::Partial(absl::Span<const OpArg> args,
                                                  PartialKind kind) {
  for (const OpArg& a : args) Partial(a, kind);
  return *this;
}
SbpSignatureBuilder& SbpSignatureBuilder::Build() {
  ctx_->candidates_.push_back(sig_);
  return *this;
}

SbpContext::SbpContext(const OpCall& call, absl::Span<const TensorDesc> inputs,
                       absl::Span<const TensorDesc> outputs, int64_t hierarchy_value,
                       int64_t parallel_num, DeviceType device_type)
    : call_(call),
      inputs_(inputs),
      outputs_(outputs),
      hierarchy_value_(hierarchy_value),
      parallel_num_(parallel_num),
      device_type_(device_type) {}

const TensorDesc& SbpContext::LogicalTensorDesc4InputArgNameAndIndex(
    absl::string_view arg, int index) {
  const int b = call_.InputBlob(arg, index);
  if (b < 0) {
    static const TensorDesc* const kMissingBlobDesc = new TensorDesc();
    RecordRuleBug(absl::StrCat("rule asks for input ", arg, "_", index,
                               ", which this call does not have"));
    return *kMissingBlobDesc;
  }
  return inputs_[b];
}

const TensorDesc& SbpContext::output_desc(absl::string_view arg, int index) {
  const int b = call_.OutputBlob(arg, index);
  if (b < 0) {
    static const TensorDesc* const kMissingBlobDesc = new TensorDesc();
    RecordRuleBug(absl::StrCat("rule asks for output ", arg, "_", index,
                               ", which this call does not have"));
    return *kMissingBlobDesc;
  }
  return outputs_[b - call_.num_inputs()];
}

void SbpContext::OursFollow() {
  if (marks_ours()) {
    RecordRuleBug(absl::StrCat(op_type(), ": the rule marks where its own candidates start twice"));
    return;
  }
  oneflow_count_ = static_cast<int64_t>(candidates_.size());
}

void SbpContext::RecordRuleBug(absl::string_view message) {
  if (status_.ok()) status_ = absl::InternalError(message);
}

absl::Status SplitForEachAxis(SbpContext& ctx) {
  if (ctx.inputs().empty()) {
    return absl::InvalidArgumentError("SplitForEachAxis needs at least one input");
  }
  const OpArg& first = ctx.inputs()[0];
  const int rank = ctx.input_desc(first.name, first.index).shape.rank();
  for (const OpArg& in : ctx.inputs()) {
    const TensorDesc& d = ctx.input_desc(in.name, in.index);
    if (d.shape.rank() != rank) {
      return absl::InvalidArgumentError(absl::StrCat(
          "inputs must share one rank: ", first.name, "_", first.index, " is ",
          ctx.input_desc(first.name, first.index).ToString(), ", ", in.name, "_",
          in.index, " is ", d.ToString()));
    }
  }
  for (int i = 0; i < rank; ++i) {
    ctx.NewBuilder().Split(ctx.inputs(), i).Split(ctx.outputs(), i).Build();
  }
  return absl::OkStatus();
}

}  // namespace oneflow_sbp
