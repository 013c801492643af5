#include "eager/tensor_layout.h"

#include <utility>

#include "absl/strings/str_cat.h"
#include "absl/time/clock.h"
#include "oneflow_sbp/values/status_macros.h"
#include "runtime/executor.h"
#include "runtime/region_copy.h"
#include "oneflow_sbp/values/nd_sbp_validation.h"
#include "oneflow_sbp/values/tensor_slice_view.h"

namespace oneflow_sbp::eager {
namespace {

// This rank's parallel_id in `placement`, or -1.
int64_t ParallelIdOf(const Placement& placement, int64_t rank) {
  absl::StatusOr<int64_t> id = placement.ParallelIdOf(rank);
  return id.ok() ? *id : -1;
}

LocalDims DimsOf(const TensorSlice& s) {
  LocalDims d;
  for (const IndexRange& r : s.ranges()) d.push_back(r.size());
  return d;
}

}  // namespace

absl::StatusOr<GlobalTensor> ToGlobal(EagerContext& ctx, const LocalTensor& local,
                                      const Shape& shape, const Placement& placement,
                                      const NdSbp& nd_sbp) {
  absl::Status s = ValidateNdSbp(nd_sbp, shape, placement.hierarchy());
  OFS_RETURN_IF_ERROR(s);
  const int64_t id = ParallelIdOf(placement, ctx.rank());
  if (id < 0) {
    const DataType dtype = local.defined() ? local.dtype() : DataType::kFloat32;
    return GlobalTensor(TensorDesc{shape, dtype}, placement, nd_sbp, LocalTensor());
  }
  const TensorSlice slice = SliceAt(shape, nd_sbp, placement.hierarchy(), placement.CoordinateOf(id));
  if (!local.defined() || local.dims() != DimsOf(slice)) {
    return absl::InvalidArgumentError(absl::StrCat(
        "to_global: rank ", ctx.rank(), " holds ", slice.ToString(), " of ", shape.ToString(),
        " as ", nd_sbp.ToString(), ", so its local tensor must have dims ",
        DimsToString(DimsOf(slice)), "; got ",
        local.defined() ? DimsToString(local.dims()) : std::string("none")));
  }
  return GlobalTensor(TensorDesc{shape, local.dtype()}, placement, nd_sbp, local);
}

LocalTensor ToLocal(const GlobalTensor& t) { return t.local(); }

GlobalTensor Detach(const GlobalTensor& t) {
  return GlobalTensor::SameValue(t, t.placement(), t.nd_sbp(), t.local());
}

absl::StatusOr<GlobalTensor> Redistribute(EagerContext& ctx, const GlobalTensor& t,
                                          const Placement& placement, const NdSbp& nd_sbp,
                                          const std::string& blob,
                                          std::vector<BoxingEvent>* events) {
  if (t.placement() == placement && t.nd_sbp() == nd_sbp) return t;
  OFS_ASSIGN_OR_RETURN(std::shared_ptr<const boxing::BoxingPlan> plan,
      ctx.engine().Plan( boxing::PlanRequest{t.shape(), t.dtype(), t.placement(), t.nd_sbp(),
      placement, nd_sbp}));
  runtime::ExecutionReport report;
  absl::Time start = absl::Now();
  OFS_ASSIGN_OR_RETURN(LocalTensor out, runtime::ExecutePlan(*plan, t.local(), ctx.world(),
      &report, ctx.call_options()));
  if (events != nullptr) {
    for (size_t k = 0; k < report.steps.size(); ++k) {
      const runtime::StepReport& r = report.steps[k];
      const comm::Traffic planned = runtime::PlannedTraffic(*plan, static_cast<int>(k), ctx.rank());
      const boxing::BoxingStep& step = plan->steps[k];
      std::string what(boxing::StepKindName(r.kind));
      if (step.kind != boxing::StepKind::kPointToPoint) {
        absl::StrAppend(&what, " ", step.from.ToString(), "->", step.to.ToString());
      }
      events->push_back(BoxingEvent{blob, what, planned.bytes_sent, planned.bytes_received,
                                    r.traffic.bytes_sent, r.traffic.bytes_received, start,
                                    absl::Seconds(r.seconds)});
      start += absl::Seconds(r.seconds);
    }
  }
  return GlobalTensor::SameValue(t, placement, nd_sbp, std::move(out));
}

absl::StatusOr<GlobalTensor> Redistribute(EagerContext& ctx, const GlobalTensor& t,
                                          const Placement& placement, const NdSbp& nd_sbp) {
  if (!ctx.options().trace) return Redistribute(ctx, t, placement, nd_sbp, "tensor", nullptr);
  OpEvent e;
  e.op = "redistribute";
  e.signature = absl::StrCat(t.nd_sbp().ToString(), " -> ", nd_sbp.ToString());
  e.start = absl::Now();
  absl::StatusOr<GlobalTensor> out =
      Redistribute(ctx, t, placement, nd_sbp, "tensor", &e.boxing_steps);
  e.total = e.boxing = absl::Now() - e.start;
  if (out.ok()) ctx.trace().Add(std::move(e));
  return out;
}

absl::StatusOr<GlobalTensor> FromFull(EagerContext& ctx, const LocalTensor& full,
                                      const Placement& placement, const NdSbp& nd_sbp) {
  OFS_ASSIGN_OR_RETURN(Shape shape, Shape::Make(full.dims()));
  absl::Status s = ValidateNdSbp(nd_sbp, shape, placement.hierarchy());
  OFS_RETURN_IF_ERROR(s);
  const TensorDesc desc{shape, full.dtype()};
  const int64_t id = ParallelIdOf(placement, ctx.rank());
  if (id < 0) return GlobalTensor(desc, placement, nd_sbp, LocalTensor());
  const MeshCoord coord = placement.CoordinateOf(id);
  const TensorSlice slice = SliceAt(shape, nd_sbp, placement.hierarchy(), coord);
  bool keeps = true;  // the P groups' coordinate-0 rank keeps the value
  for (int i = 0; i < nd_sbp.size(); ++i) keeps = keeps && (!nd_sbp[i].is_partial_sum() || coord[i] == 0);
  OFS_ASSIGN_OR_RETURN(LocalTensor local, LocalTensor::Zeros(full.dtype(), DimsOf(slice)));
  if (keeps) {
    s = runtime::CopyRegion(full, TensorSlice(shape), slice, &local, slice,
                           runtime::RegionOp::kCopy);
    OFS_RETURN_IF_ERROR(s);
  }
  if (placement.device_type() != DeviceType::kCpu) {
    OFS_ASSIGN_OR_RETURN(local, local.CopyTo(placement.device_type()));
  }
  return GlobalTensor(desc, placement, nd_sbp, std::move(local));
}

absl::StatusOr<LocalTensor> ToFull(EagerContext& ctx, const GlobalTensor& t) {
  NdSbp all_b;
  for (int i = 0; i < t.placement().num_axes(); ++i) all_b.push_back(SbpParallel::Broadcast());
  OFS_ASSIGN_OR_RETURN(GlobalTensor b, Redistribute(ctx, t, t.placement(), all_b));
  if (!b.local().defined() || b.local().device() == DeviceType::kCpu) return b.local();
  return b.local().CopyTo(DeviceType::kCpu);
}

}  // namespace oneflow_sbp::eager
