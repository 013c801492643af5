// CPU kernels of dropout and dropout_grad (rules in ops/nn_ops.cc).
//
// dropout(in, opt _add_to_output; rate, seed) -> (out, mask):
//   mask = keep(i), out = in * mask * scale (+ _add_to_output),
//   scale = 1 / (1 - rate) (0 when rate == 1: nothing is kept).
// keep(i) depends only on (seed, i) where i is the element's GLOBAL
// row-major index in the logical tensor (philox.h), never on the layout:
// each rank computes the global index of every local element from its
// slice, so a sharded run draws exactly the mask of a single-rank run.
// dropout_grad(dy, mask; scale) -> dx = dy * mask * scale.
// Dtypes: f32 f64 f16 bf16 (f16/bf16 compute in float); mask is bool.
#include <cstdint>
#include <vector>

#include "absl/strings/str_cat.h"
#include "oneflow_sbp/values/status_macros.h"
#include "kernels/common/dropout_args.h"
#include "kernels/dtype_dispatch.h"
#include "kernels/kernel_registry.h"
#include "kernels/philox.h"

namespace oneflow_sbp::kernels {
namespace {

using Floating = DtypeConcat<FloatTypes, HalfTypes>;

// Calls fn(local_offset, global_index, n) for every run of n elements of a
// local block (`slice` of `logical`) that are consecutive in both.
template <typename Fn>
void ForEachGlobalRun(const Shape& logical, const TensorSlice& slice, const LocalDims& local,
                      Fn&& fn) {
  const int rank = logical.rank();
  int64_t count = 1;
  for (int64_t d : local) count *= d;
  if (count == 0) return;
  const LocalDims global_strides = RowMajorStrides(logical.dims());
  const int64_t row = rank ? local[rank - 1] : 1;
  LocalDims idx(rank, 0);
  for (int64_t offset = 0; offset < count; offset += row) {
    int64_t g = 0;
    for (int d = 0; d < rank; ++d) g += (slice.range(d).begin + idx[d]) * global_strides[d];
    fn(offset, g, row);
    for (int d = rank - 2; d >= 0; --d) {
      if (++idx[d] < local[d]) break;
      idx[d] = 0;
    }
  }
}

absl::Status DropoutKernel(KernelContext& ctx) {
  const LocalTensor& in = ctx.input("in");
  OFS_ASSIGN_OR_RETURN(const DropoutArgs args, CheckDropout(ctx));
  const uint64_t seed = args.seed;
  const uint32_t threshold = args.threshold;
  const BlobLayout& layout = ctx.input_layout(0);
  LocalTensor& out = ctx.output(0);
  bool* mask = ctx.output(1).data<bool>();
  return DispatchDtype<Floating>(ctx, in.dtype(), "in_0", [&](auto tag) {
    using T = typename decltype(tag)::type;
    using C = ComputeType<T>;
    const T* x = in.data<T>();
    const T* add = args.add != nullptr ? args.add->data<T>() : nullptr;
    T* y = out.data<T>();
    const C s = static_cast<C>(args.scale);
    ForEachGlobalRun(layout.logical.shape, layout.slice, in.dims(),
                     [&](int64_t offset, int64_t global, int64_t n) {
                       PhiloxBlock block{};
                       uint64_t block_index = UINT64_MAX;
                       for (int64_t j = 0; j < n; ++j) {
                         const uint64_t g = static_cast<uint64_t>(global + j);
                         if (g / 4 != block_index) {
                           block_index = g / 4;
                           block = PhiloxElementBlock(seed, g);
                         }
                         const bool keep = DropoutKeeps(block.v[g % 4], threshold);
                         const int64_t i = offset + j;
                         mask[i] = keep;
                         C v = ConvertElement<C>(x[i]) * (keep ? s : C(0));
                         if (add != nullptr) v += ConvertElement<C>(add[i]);
                         y[i] = ConvertElement<T>(v);
                       }
                     });
    return absl::OkStatus();
  });
}

absl::Status DropoutGradKernel(KernelContext& ctx) {
  const LocalTensor& dy = ctx.input(0);
  const LocalTensor& mask = ctx.input(1);
  const double scale = ctx.Attr<double>("scale");
  OFS_RETURN_IF_ERROR(CheckDropoutGrad(ctx));
  LocalTensor& dx = ctx.output(0);
  return DispatchDtype<Floating>(ctx, dy.dtype(), "dy_0", [&](auto tag) {
    using T = typename decltype(tag)::type;
    using C = ComputeType<T>;
    const T* g = dy.data<T>();
    const bool* m = mask.data<bool>();
    T* out = dx.data<T>();
    const C s = static_cast<C>(scale);
    for (int64_t i = 0; i < dy.elem_cnt(); ++i) {
      out[i] = ConvertElement<T>(ConvertElement<C>(g[i]) * (m[i] ? s : C(0)));
    }
    return absl::OkStatus();
  });
}

absl::Status RegisterDropoutKernels(KernelRegistry& registry) {
  return RegisterKernels(registry, DeviceType::kCpu,
                         {{"dropout", DropoutKernel, DtypesOf(Floating{})},
                          {"dropout_grad", DropoutGradKernel, DtypesOf(Floating{})}});
}

OFS_REGISTER_KERNELS(RegisterDropoutKernels);

}  // namespace
}  // namespace oneflow_sbp::kernels
