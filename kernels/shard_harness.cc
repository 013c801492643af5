#include "kernels/shard_harness.h"

#include <algorithm>
#include <cmath>
#include <cstring>
#include <limits>
#include <utility>

#include "absl/strings/str_cat.h"
#include "comm/communicator.h"
#include "comm/inprocess_world.h"
#include "oneflow_sbp/storage/element_type.h"
#include "oneflow_sbp/values/status_macros.h"
#include "oneflow_sbp/values/tensor_slice_view.h"
#include "kernels/kernel_context.h"

namespace oneflow_sbp::kernels {
namespace {

uint64_t SplitMix64(uint64_t x) {
  x += 0x9E3779B97F4A7C15ull;
  x = (x ^ (x >> 30)) * 0xBF58476D1CE4E5B9ull;
  x = (x ^ (x >> 27)) * 0x94D049BB133111EBull;
  return x ^ (x >> 31);
}

// The part [r.begin, r.end) of dim `dim` of `t`, bytes copied exactly;
// kResourceExhausted if memory runs out.
absl::StatusOr<LocalTensor> SubBlock(const LocalTensor& t, int dim, IndexRange r) {
  int64_t outer = 1, inner = ByteSizeOf(t.dtype());
  for (int d = 0; d < dim; ++d) outer *= t.dim(d);
  for (int d = dim + 1; d < t.rank(); ++d) inner *= t.dim(d);
  LocalDims dims = t.dims();
  dims[dim] = r.size();
  OFS_ASSIGN_OR_RETURN(LocalTensor out, LocalTensor::Empty(t.dtype(), dims));
  const char* src = static_cast<const char*>(t.raw_data());
  char* dst = static_cast<char*>(out.raw_data());
  for (int64_t o = 0; o < outer; ++o) {
    std::memcpy(dst + o * r.size() * inner, src + (o * t.dim(dim) + r.begin) * inner,
                static_cast<size_t>(r.size() * inner));
  }
  return out;
}

// Copies `local` (holding `slice`) into its place in `full`, bytes exact.
void Place(const LocalTensor& local, const TensorSlice& slice, LocalTensor& full) {
  const int rank = slice.rank();
  if (local.elem_cnt() == 0) return;
  const int64_t esize = ByteSizeOf(local.dtype());
  const LocalDims strides = RowMajorStrides(full.dims());
  const int64_t row = rank ? local.dim(rank - 1) : 1;
  const char* src = static_cast<const char*>(local.raw_data());
  char* dst = static_cast<char*>(full.raw_data());
  LocalDims idx(rank, 0);
  for (int64_t i = 0; i < local.elem_cnt(); i += row) {
    int64_t g = 0;
    for (int d = 0; d < rank; ++d) g += (slice.range(d).begin + idx[d]) * strides[d];
    std::memcpy(dst + g * esize, src + i * esize, static_cast<size_t>(row * esize));
    for (int d = rank - 2; d >= 0; --d) {
      if (++idx[d] < local.dim(d)) break;
      idx[d] = 0;
    }
  }
}

absl::StatusOr<Shape> LogicalShapeOf(const LocalTensor& t, absl::string_view what) {
  if (!t.defined()) return absl::InvalidArgumentError(absl::StrCat(what, " is undefined"));
  absl::StatusOr<Shape> shape = Shape::Make(t.dims());
  if (!shape.ok()) {
    return absl::InvalidArgumentError(absl::StrCat(
        what, " ", DimsToString(t.dims()), " is not a logical tensor: ", shape.status().message()));
  }
  return shape;
}

}  // namespace

void Poison(LocalTensor& t) {
  VisitDataType(t.dtype(), [&](auto tag) {
    using T = typename decltype(tag)::type;
    T* p = t.data<T>();
    for (int64_t i = 0; i < t.elem_cnt(); ++i) {
      if constexpr (std::is_same_v<T, bool>) {
        p[i] = i % 2 == 0;
      } else if constexpr (std::is_integral_v<T>) {
        std::memset(&p[i], 0x5A, sizeof(T));
      } else {
        p[i] = ConvertElement<T>(std::numeric_limits<float>::quiet_NaN());
      }
    }
  });
}

namespace {

// Adds `local` (holding `slice` of a tensor with `strides`) into `acc`.
// Combines `local` into `acc` (the logical tensor) by the partial's
// reduction: adds for P, keeps the larger (smaller) for P(max) (P(min)).
void Accumulate(const LocalTensor& local, const TensorSlice& slice, const LocalDims& strides,
                PartialKind kind, std::vector<double>* acc) {
  const int rank = slice.rank();
  LocalDims idx(rank, 0);
  for (int64_t i = 0; i < local.elem_cnt(); ++i) {
    int64_t g = 0;
    for (int d = 0; d < rank; ++d) g += (slice.range(d).begin + idx[d]) * strides[d];
    const double v = local.GetDouble(i);
    double& a = (*acc)[g];
    a = kind == PartialKind::kSum ? a + v : kind == PartialKind::kMax ? std::max(a, v) : std::min(a, v);
    for (int d = rank - 1; d >= 0; --d) {
      if (++idx[d] < local.dim(d)) break;
      idx[d] = 0;
    }
  }
}

// `placement` with its device type replaced by `device` (same ranks and
// hierarchy): what the kernels see when the harness runs them on a device.
absl::StatusOr<Placement> OnDevice(const Placement& placement, DeviceType device) {
  if (placement.device_type() == device) return placement;
  return Placement::Make(device, placement.ranks(), placement.hierarchy());
}

// `t` itself on the CPU, else a copy on `device`; errors name the blob.
absl::StatusOr<LocalTensor> MoveForKernel(const LocalTensor& t, DeviceType device,
                                          absl::string_view what) {
  if (device == t.device()) return t;
  absl::StatusOr<LocalTensor> moved = t.CopyTo(device);
  if (!moved.ok()) {
    return absl::Status(moved.status().code(),
                        absl::StrCat("copying ", what, " to ", DeviceTypeName(device), ": ",
                                     moved.status().message()));
  }
  return moved;
}

}  // namespace

namespace {

// Rank `pid`'s local tensor of `full` laid out as `nd_sbp` (checked by the
// caller).
absl::StatusOr<LocalTensor> LocalOf(const LocalTensor& full, const NdSbp& nd_sbp,
                                    const Placement& placement, const HarnessOptions& options,
                                    int64_t pid) {
  const int64_t span = 2 * static_cast<int64_t>(options.max_addend) + 1;
  const MeshCoord coord = placement.CoordinateOf(pid);
  LocalTensor local = full;
  uint64_t key = SplitMix64(options.seed);
  for (int a = 0; a < nd_sbp.size(); ++a) {
    const SbpParallel sbp = nd_sbp[a];
    const int64_t h = placement.hierarchy()[a];
    if (sbp.is_split()) {
      const int k = sbp.split_axis();
      OFS_ASSIGN_OR_RETURN(local,
                           SubBlock(local, k, BalancedPart(IndexRange{0, local.dim(k)}, h, coord[a])));
    } else if (sbp.is_partial_sum()) {
      // Addend c of element i; the same on every rank that shares the
      // coordinates of the axes before this one. P arithmetic is in
      // double (exact for integers up to 2^53).
      auto addend = [&](int64_t c, int64_t i) {
        const uint64_t r = SplitMix64(key ^ SplitMix64(static_cast<uint64_t>(c) * 0x100000001b3ull +
                                                       static_cast<uint64_t>(i)));
        return static_cast<double>(static_cast<int64_t>(r % static_cast<uint64_t>(span)) -
                                   options.max_addend);
      };
      OFS_ASSIGN_OR_RETURN(LocalTensor next, local.CopyTo(local.device()));
      for (int64_t i = 0; i < local.elem_cnt(); ++i) {
        double v = local.GetDouble(i);
        if (coord[a] != 0) {
          v = addend(coord[a], i);
        } else {
          for (int64_t c = 1; c < h; ++c) v -= addend(c, i);
        }
        next.SetDouble(i, v);
        const double got = next.GetDouble(i);
        if (!(got == v || (std::isnan(got) && std::isnan(v)))) {
          return absl::InvalidArgumentError(absl::StrCat(
              "cannot lay out a ", DataTypeName(full.dtype()), " tensor as ",
              nd_sbp.ToString(), " exactly: rank ", pid, "'s addend ", v, " rounds to ", got,
              " (use values on a coarser grid)"));
        }
      }
      local = std::move(next);
    } else if (sbp.is_partial()) {
      // P(max) (P(min)): the rank at coordinate 0 holds the value, every
      // other a candidate 1..max_addend below (above) it, so a kernel that
      // treats the candidates as copies or as addends shows.
      const double sign = sbp.is_partial_max() ? -1 : 1;
      OFS_ASSIGN_OR_RETURN(LocalTensor next, local.CopyTo(local.device()));
      for (int64_t i = 0; i < local.elem_cnt() && coord[a] != 0; ++i) {
        const uint64_t r = SplitMix64(key ^ SplitMix64(static_cast<uint64_t>(coord[a]) *
                                                           0x100000001b3ull +
                                                       static_cast<uint64_t>(i)));
        const double v = local.GetDouble(i) +
                         sign * static_cast<double>(1 + r % static_cast<uint64_t>(
                                                                std::max(1, options.max_addend)));
        next.SetDouble(i, v);
        const double got = next.GetDouble(i);
        if (!(got == v || std::isnan(v) || std::isinf(v))) {
          return absl::InvalidArgumentError(absl::StrCat(
              "cannot lay out a ", DataTypeName(full.dtype()), " tensor as ",
              nd_sbp.ToString(), " exactly: rank ", pid, "'s candidate ", v, " rounds to ",
              got, " (use values on a coarser grid)"));
        }
      }
      local = std::move(next);
    }
    // Ranks that differ only in B coordinates must hold identical copies.
    if (!sbp.is_broadcast()) {
      key = SplitMix64(key ^ (static_cast<uint64_t>(coord[a]) + 1) * 0x9E3779B97F4A7C15ull);
    }
  }
  if (local.SharesStorageWith(full)) {
    OFS_ASSIGN_OR_RETURN(local, full.CopyTo(full.device()));
  }
  return local;
}

absl::Status CheckDistributable(const LocalTensor& full, const NdSbp& nd_sbp,
                                const Placement& placement) {
  OFS_ASSIGN_OR_RETURN(const Shape shape, LogicalShapeOf(full, "the full tensor"));
  OFS_RETURN_IF_ERROR(ValidateNdSbp(nd_sbp, shape, placement.hierarchy()));
  if (nd_sbp.any_partial() && full.dtype() == DataType::kBool) {
    return absl::InvalidArgumentError(
        absl::StrCat("a bool tensor cannot be laid out as ", nd_sbp.ToString(),
                     ": bool values have no addends"));
  }
  return absl::OkStatus();
}

}  // namespace

absl::StatusOr<std::vector<LocalTensor>> DistributeTensor(const LocalTensor& full,
                                                          const NdSbp& nd_sbp,
                                                          const Placement& placement,
                                                          const HarnessOptions& options) {
  OFS_RETURN_IF_ERROR(CheckDistributable(full, nd_sbp, placement));
  std::vector<LocalTensor> locals;
  for (int64_t pid = 0; pid < placement.parallel_num(); ++pid) {
    OFS_ASSIGN_OR_RETURN(LocalTensor local, LocalOf(full, nd_sbp, placement, options, pid));
    locals.push_back(std::move(local));
  }
  return locals;
}

absl::StatusOr<LocalTensor> DistributeTensorTo(const LocalTensor& full, const NdSbp& nd_sbp,
                                               const Placement& placement, int64_t parallel_id,
                                               const HarnessOptions& options) {
  OFS_RETURN_IF_ERROR(CheckDistributable(full, nd_sbp, placement));
  if (parallel_id < 0 || parallel_id >= placement.parallel_num()) {
    return absl::InvalidArgumentError(absl::StrCat("parallel id ", parallel_id, " of ",
                                                   placement.ToString()));
  }
  return LocalOf(full, nd_sbp, placement, options, parallel_id);
}

absl::StatusOr<LocalTensor> AssembleTensor(absl::Span<const LocalTensor> locals,
                                           const TensorDesc& logical, const NdSbp& nd_sbp,
                                           const Placement& placement, absl::string_view bn) {
  if (static_cast<int64_t>(locals.size()) != placement.parallel_num()) {
    return absl::InvalidArgumentError(absl::StrCat(bn, ": ", locals.size(), " local tensors for ",
                                                   placement.parallel_num(), " ranks"));
  }
  OFS_ASSIGN_OR_RETURN(std::vector<TensorSlice> slices,
                       AllRankSlices(logical.shape, nd_sbp, placement));
  std::vector<int64_t> rep(locals.size());
  for (int64_t pid = 0; pid < placement.parallel_num(); ++pid) {
    const LocalTensor& t = locals[pid];
    LocalDims want;
    for (const IndexRange& r : slices[pid].ranges()) want.push_back(std::max<int64_t>(0, r.size()));
    if (!t.defined() || t.dtype() != logical.dtype || t.dims() != want) {
      return absl::InternalError(absl::StrCat(
          bn, ": rank ", pid, " holds ",
          t.defined() ? absl::StrCat(DataTypeName(t.dtype()), DimsToString(t.dims())) : "nothing",
          " but ", logical.ToString(), " as ", nd_sbp.ToString(), " gives it ",
          DataTypeName(logical.dtype), DimsToString(want)));
    }
    MeshCoord coord = placement.CoordinateOf(pid);
    for (int a = 0; a < nd_sbp.size(); ++a) {
      if (nd_sbp[a].is_broadcast()) coord[a] = 0;
    }
    rep[pid] = placement.ParallelIdAt(coord);
    if (rep[pid] != pid) {
      const std::string diff = DescribeMismatch(t, locals[rep[pid]]);
      if (!diff.empty()) {
        return absl::InternalError(absl::StrCat(bn, " ", nd_sbp.ToString(), ": ranks ", pid,
                                                " and ", rep[pid],
                                                " hold broadcast copies that differ: ", diff));
      }
    }
  }
  if (!nd_sbp.any_partial()) {
    OFS_ASSIGN_OR_RETURN(LocalTensor full, LocalTensor::Empty(logical.dtype, logical.shape.dims()));
    for (int64_t pid = 0; pid < placement.parallel_num(); ++pid) {
      if (rep[pid] == pid) Place(locals[pid], slices[pid], full);
    }
    return full;
  }
  const PartialKind kind = *nd_sbp.partial_kind();
  const double start = kind == PartialKind::kSum   ? 0.0
                       : kind == PartialKind::kMax ? -std::numeric_limits<double>::infinity()
                                                   : std::numeric_limits<double>::infinity();
  std::vector<double> acc(static_cast<size_t>(logical.shape.elem_cnt()), start);
  const LocalDims strides = RowMajorStrides(logical.shape.dims());
  for (int64_t pid = 0; pid < placement.parallel_num(); ++pid) {
    if (rep[pid] == pid) Accumulate(locals[pid], slices[pid], strides, kind, &acc);
  }
  if (logical.dtype == DataType::kBool) {
    for (double& v : acc) v = v != 0 ? 1 : 0;
  }
  return LocalTensor::FromDoubles(logical.dtype, logical.shape.dims(), acc);
}

namespace {

// The logical desc of every blob: the full inputs', then the outputs the
// op infers from them.
absl::StatusOr<std::vector<TensorDesc>> LogicalBlobDescs(
    const OpCall& call, absl::Span<const LocalTensor> full_inputs) {
  const std::string& op = call.type_name();
  std::vector<TensorDesc> descs;
  for (int b = 0; b < call.num_inputs(); ++b) {
    OFS_ASSIGN_OR_RETURN(Shape shape,
                         LogicalShapeOf(full_inputs[b], absl::StrCat(op, " input ", call.bn(b))));
    descs.push_back(TensorDesc{shape, full_inputs[b].dtype()});
  }
  OFS_ASSIGN_OR_RETURN(std::vector<TensorDesc> out_descs, call.InferOutputDescs(descs));
  descs.insert(descs.end(), out_descs.begin(), out_descs.end());
  return descs;
}

// locals[b][pid]: input b on rank pid, laid out as `signature` gives it.
absl::StatusOr<std::vector<std::vector<LocalTensor>>> DistributeInputs(
    const OpCall& call, absl::Span<const LocalTensor> full_inputs, const Placement& placement,
    const NdSbpSignature& signature, const HarnessOptions& options) {
  std::vector<std::vector<LocalTensor>> locals;
  for (int b = 0; b < call.num_inputs(); ++b) {
    HarnessOptions blob_options = options;
    blob_options.seed = SplitMix64(options.seed + static_cast<uint64_t>(b));
    absl::StatusOr<std::vector<LocalTensor>> l =
        DistributeTensor(full_inputs[b], signature[b], placement, blob_options);
    if (!l.ok()) {
      return absl::Status(l.status().code(), absl::StrCat(call.type_name(), " input ",
                                                          call.bn(b), ": ",
                                                          l.status().message()));
    }
    if (call.is_mutable_input(b)) {
      // B layouts share the full tensor's storage; a kernel writing in
      // place must see a rank-private copy.
      for (LocalTensor& t : *l) {
        OFS_ASSIGN_OR_RETURN(t, t.CopyTo(t.device()));
      }
    }
    locals.push_back(*std::move(l));
  }
  return locals;
}

// One RunSharded call: what every rank reads, and where the ranks leave
// their results. Each rank writes only its own [pid] entries, so ranks run
// as threads need no locking.
struct ShardedRun {
  std::shared_ptr<const OpCall> call;
  // The caller's: distribution, assembly and error messages use it.
  const Placement& placement;
  // The same ranks on options.device: what the kernels see.
  const Placement& kernel_placement;
  const NdSbpSignature& signature;
  const HarnessOptions& options;
  const KernelRegistry& registry;
  std::vector<TensorDesc> descs;
  // locals[b][pid]: input b on rank pid.
  std::vector<std::vector<LocalTensor>> locals;
  // outs[i][pid]: output i of rank pid.
  std::vector<std::vector<LocalTensor>> outs;
};

// Runs the kernel of rank `pid` (with `world` when ranks run as threads).
absl::Status RunRank(ShardedRun& run, int64_t pid, comm::Communicator* world) {
  const OpCall& call = *run.call;
  const DeviceType device = run.options.device;
  OFS_ASSIGN_OR_RETURN(std::vector<BlobLayout> layouts,
                       MakeBlobLayouts(call, run.placement, pid, run.descs, run.signature));
  // Poisoned on the host, then moved: Poison writes elements directly.
  OFS_ASSIGN_OR_RETURN(
      std::vector<LocalTensor> outputs,
      AllocateLocalOutputs(absl::MakeConstSpan(layouts).subspan(call.num_inputs())));
  for (int i = 0; i < call.num_outputs(); ++i) {
    if (run.options.poison_outputs) Poison(outputs[i]);
    OFS_ASSIGN_OR_RETURN(outputs[i],
                         MoveForKernel(outputs[i], device, call.bn(call.num_inputs() + i)));
  }
  // Handles to the kernel's inputs: on a device, the mutated inputs are
  // read back through them.
  std::vector<LocalTensor> inputs;
  for (int b = 0; b < call.num_inputs(); ++b) {
    OFS_ASSIGN_OR_RETURN(LocalTensor t, MoveForKernel(run.locals[b][pid], device, call.bn(b)));
    inputs.push_back(std::move(t));
  }
  OFS_ASSIGN_OR_RETURN(KernelContext ctx,
                       KernelContext::MakeWithLayouts(run.call, run.kernel_placement, pid,
                                                      std::move(layouts), inputs, outputs));
  OFS_RETURN_IF_ERROR(ctx.SetWorld(world));
  OFS_RETURN_IF_ERROR(RunKernel(ctx, run.registry));
  for (int i = 0; i < call.num_outputs(); ++i) {
    OFS_ASSIGN_OR_RETURN(run.outs[i][pid], MoveForKernel(outputs[i], DeviceType::kCpu,
                                                         call.bn(call.num_inputs() + i)));
  }
  for (int b = 0; device != DeviceType::kCpu && b < call.num_inputs(); ++b) {
    if (!call.is_mutable_input(b)) continue;
    OFS_ASSIGN_OR_RETURN(run.locals[b][pid],
                         MoveForKernel(inputs[b], DeviceType::kCpu, call.bn(b)));
  }
  return absl::OkStatus();
}

// `s`, the failure of rank `pid`, naming the rank where there are several.
absl::Status WithRank(const ShardedRun& run, int64_t pid, const absl::Status& s) {
  if (run.placement.parallel_num() == 1) return s;
  return absl::Status(s.code(), absl::StrCat("rank ", pid, " of ", run.placement.ToString(),
                                             " (", SignatureToString(*run.call, run.signature),
                                             "): ", s.message()));
}

// The parallel id whose rank failed first on its own: the lowest that
// failed, unless it only saw the world aborted (because of another's
// failure), which says less than a rank with its own error; -1 if none
// failed. `statuses` is indexed by world rank.
int64_t FirstOwnFailure(const Placement& placement, const std::vector<absl::Status>& statuses) {
  int64_t first = -1;
  for (int64_t pid = 0; pid < placement.parallel_num(); ++pid) {
    const absl::Status& s = statuses[placement.RankOf(pid)];
    if (s.ok()) continue;
    if (first < 0 || (statuses[placement.RankOf(first)].code() == absl::StatusCode::kAborted &&
                      s.code() != absl::StatusCode::kAborted)) {
      first = pid;
    }
  }
  return first;
}

// Every rank's kernel, one after another or as threads of a fresh
// in-process world.
absl::Status RunAllRanks(ShardedRun& run) {
  const Placement& placement = run.placement;
  if (!run.options.ranks_as_threads) {
    for (int64_t pid = 0; pid < placement.parallel_num(); ++pid) {
      const absl::Status s = RunRank(run, pid, nullptr);
      if (!s.ok()) return WithRank(run, pid, s);
    }
    return absl::OkStatus();
  }
  // World rank == device rank; world ranks outside the placement idle.
  comm::InProcessOptions world_options;
  world_options.default_timeout = run.options.collective_timeout;
  OFS_ASSIGN_OR_RETURN(
      std::vector<absl::Status> statuses,
      comm::RunRanks(
          static_cast<int>(placement.ranks().back() + 1),
          [&](comm::Communicator& world) -> absl::Status {
            absl::StatusOr<int64_t> pid = placement.ParallelIdOf(world.rank());
            return pid.ok() ? RunRank(run, *pid, &world) : absl::OkStatus();
          },
          world_options));
  const int64_t first = FirstOwnFailure(placement, statuses);
  if (first >= 0) return WithRank(run, first, statuses[placement.RankOf(first)]);
  return absl::OkStatus();
}

// The full outputs, then (if asked) the mutable inputs, from every rank's.
absl::StatusOr<std::vector<LocalTensor>> AssembleResults(const ShardedRun& run) {
  const OpCall& call = *run.call;
  std::vector<LocalTensor> assembled;
  for (int i = 0; i < call.num_outputs(); ++i) {
    const int b = call.num_inputs() + i;
    OFS_ASSIGN_OR_RETURN(LocalTensor t, AssembleTensor(run.outs[i], run.descs[b],
                                                       run.signature[b], run.placement,
                                                       call.bn(b)));
    assembled.push_back(std::move(t));
  }
  // Mutable inputs (optimizer state) are results too: the kernel wrote
  // each rank's shard in place; assembling checks that B copies agree.
  for (int b = 0; run.options.return_mutable_inputs && b < call.num_inputs(); ++b) {
    if (!call.is_mutable_input(b)) continue;
    OFS_ASSIGN_OR_RETURN(LocalTensor t, AssembleTensor(run.locals[b], run.descs[b],
                                                       run.signature[b], run.placement,
                                                       call.bn(b)));
    assembled.push_back(std::move(t));
  }
  return assembled;
}

}  // namespace

absl::StatusOr<std::vector<LocalTensor>> RunSharded(std::shared_ptr<const OpCall> call,
                                                    absl::Span<const LocalTensor> full_inputs,
                                                    const Placement& placement,
                                                    const NdSbpSignature& signature,
                                                    const HarnessOptions& options) {
  if (call == nullptr) return absl::InvalidArgumentError("RunSharded: no op call");
  if (static_cast<int>(full_inputs.size()) != call->num_inputs() ||
      static_cast<int>(signature.size()) != call->num_blobs()) {
    return absl::InvalidArgumentError(absl::StrCat(
        call->type_name(), ": ", full_inputs.size(), " inputs and a signature of ",
        signature.size(), " blobs for ", call->ToString()));
  }
  OFS_ASSIGN_OR_RETURN(std::vector<TensorDesc> descs, LogicalBlobDescs(*call, full_inputs));
  OFS_ASSIGN_OR_RETURN(std::vector<std::vector<LocalTensor>> locals,
                       DistributeInputs(*call, full_inputs, placement, signature, options));
  const KernelRegistry& registry =
      options.registry != nullptr ? *options.registry : KernelRegistry::Global();
  OFS_ASSIGN_OR_RETURN(const Placement kernel_placement, OnDevice(placement, options.device));
  const int num_outputs = call->num_outputs();
  ShardedRun run{std::move(call),
                 placement,
                 kernel_placement,
                 signature,
                 options,
                 registry,
                 std::move(descs),
                 std::move(locals),
                 std::vector<std::vector<LocalTensor>>(
                     num_outputs, std::vector<LocalTensor>(placement.parallel_num()))};
  OFS_RETURN_IF_ERROR(RunAllRanks(run));
  return AssembleResults(run);
}

absl::StatusOr<std::vector<LocalTensor>> RunReference(std::shared_ptr<const OpCall> call,
                                                      absl::Span<const LocalTensor> full_inputs,
                                                      const HarnessOptions& options) {
  if (call == nullptr) return absl::InvalidArgumentError("RunReference: no op call");
  const std::vector<int64_t> rank0 = {0};
  OFS_ASSIGN_OR_RETURN(Placement one, Placement::Make(DeviceType::kCpu, rank0));
  const NdSbpSignature all_b(call->num_blobs(), NdSbp{SbpParallel::Broadcast()});
  HarnessOptions on_host = options;
  on_host.device = DeviceType::kCpu;
  return RunSharded(std::move(call), full_inputs, one, all_b, on_host);
}

Tolerance DefaultTolerance(DataType dtype) {
  switch (dtype) {
    case DataType::kFloat64: return {1e-9, 1e-9};
    case DataType::kFloat32: return {1e-5, 1e-5};
    case DataType::kFloat16: return {2e-3, 2e-3};
    case DataType::kBFloat16: return {1.6e-2, 1.6e-2};
    default: return {0, 0};
  }
}

std::string CompareTensors(const LocalTensor& actual, const LocalTensor& expected,
                           Tolerance tolerance) {
  if (!actual.defined() || !expected.defined()) {
    return actual.defined() == expected.defined() ? "" : "one tensor is undefined";
  }
  if (actual.dtype() != expected.dtype()) {
    return absl::StrCat("dtype ", DataTypeName(actual.dtype()), " vs ",
                        DataTypeName(expected.dtype()));
  }
  if (actual.dims() != expected.dims()) {
    return absl::StrCat("dims ", DimsToString(actual.dims()), " vs ",
                        DimsToString(expected.dims()));
  }
  int64_t bad = 0;
  int64_t first = -1;
  for (int64_t i = 0; i < actual.elem_cnt(); ++i) {
    const double a = actual.GetDouble(i);
    const double e = expected.GetDouble(i);
    bool ok;
    if (std::isnan(a) || std::isnan(e)) {
      ok = std::isnan(a) && std::isnan(e);
    } else if (std::isinf(a) || std::isinf(e)) {
      ok = a == e;
    } else {
      ok = std::abs(a - e) <= tolerance.atol + tolerance.rtol * std::abs(e);
    }
    if (!ok && bad++ == 0) first = i;
  }
  if (bad == 0) return "";
  LocalDims idx(actual.rank());
  int64_t rest = first;
  for (int d = actual.rank() - 1; d >= 0; --d) {
    idx[d] = rest % actual.dim(d);
    rest /= actual.dim(d);
  }
  return absl::StrCat(bad, " of ", actual.elem_cnt(), " elements differ; first at ",
                      DimsToString(idx), ": ", actual.GetDouble(first), " vs ",
                      expected.GetDouble(first));
}

}  // namespace oneflow_sbp::kernels
