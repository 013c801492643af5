// CPU kernels of the reductions: reduce_sum, reduce_mean, reduce_max,
// reduce_min, reduce_prod, reduce_nansum (rules in ops/reduce_ops.cc) and
// reduce_sum_like (ops/index_ops.cc).
//
// Each rank reduces its local block over the reduced axes. That is the
// whole story for kept-dim splits (S(kept) -> S), and for a split reduced
// dim it gives exactly the rank's addend of a sum (S(reduced) -> P), which
// is why only the sum family has that candidate. reduce_mean divides by
// the GLOBAL count of reduced elements (the product of the LOGICAL
// extents), never the local one, so that the addends of S(reduced) -> P
// and P -> P sum to the mean. An empty local block reduces to the identity
// (0 for sums, 1 for prod, -inf/+inf or the integer limits for max/min).
//
// Accumulation is in double for floating types (f16/bf16 included) and in
// int64 with two's-complement wrap-around for integers. max/min propagate
// NaN; nansum skips NaN inputs (a NaN of inf + -inf stays). A reduced
// last dim is combined in four interleaved partial results (then combined
// in a fixed order), so a row's result depends only on the row.
#include <algorithm>
#include <cmath>
#include <cstdint>
#include <limits>
#include <vector>

#include "oneflow_sbp/values/status_macros.h"
#include "kernels/common/int_arith.h"
#include "kernels/common/reduce_args.h"
#include "kernels/dtype_dispatch.h"
#include "kernels/kernel_registry.h"

namespace oneflow_sbp::kernels {
namespace {

enum class ReduceKind { kSum, kMean, kMax, kMin, kProd, kNanSum };

template <typename T>
using Acc = std::conditional_t<std::is_integral_v<T>, int64_t, double>;

template <ReduceKind kKind, typename A>
constexpr A Identity() {
  if constexpr (kKind == ReduceKind::kProd) {
    return A(1);
  } else if constexpr (kKind == ReduceKind::kMax) {
    return std::is_integral_v<A> ? std::numeric_limits<A>::lowest()
                                 : -std::numeric_limits<A>::infinity();
  } else if constexpr (kKind == ReduceKind::kMin) {
    return std::is_integral_v<A> ? std::numeric_limits<A>::max()
                                 : std::numeric_limits<A>::infinity();
  } else {
    return A(0);
  }
}

// acc (+) v, chosen at compile time so that the loops vectorize.
template <ReduceKind kKind, typename A>
A Combine(A acc, A v) {
  if constexpr (kKind == ReduceKind::kProd) {
    return WrapMul(acc, v);
  } else if constexpr (kKind == ReduceKind::kMax || kKind == ReduceKind::kMin) {
    if constexpr (!std::is_integral_v<A>) {
      if (std::isnan(acc) || std::isnan(v)) return std::isnan(acc) ? acc : v;
    }
    return (kKind == ReduceKind::kMax) == (acc < v) ? v : acc;
  } else if constexpr (kKind == ReduceKind::kNanSum) {
    return std::isnan(v) ? acc : acc + v;
  } else {
    return WrapAdd(acc, v);
  }
}

// Two partial results of the same output combined: as Combine, except that
// nansum adds its partials as they are. A NaN partial came from inf + -inf
// (input NaNs were skipped), which a sequential sum keeps as NaN; skipping
// it would make the result depend on where the infinities fell among the
// interleaved partials.
template <ReduceKind kKind, typename A>
A Merge(A acc, A part) {
  if constexpr (kKind == ReduceKind::kNanSum) return acc + part;
  return Combine<kKind>(acc, part);
}

// Reduces local `x` over `reduced` (flags per dim) into `y` (any dims with
// the same element count as the kept dims); divides by `divisor` if > 0.
// The order of combination depends only on the local row, never on where
// the shard sits.
template <ReduceKind kKind, typename T>
void Reduce(const LocalTensor& x, const std::vector<bool>& reduced, double divisor,
            LocalTensor& y) {
  using A = Acc<T>;
  std::vector<A> acc(static_cast<size_t>(y.elem_cnt()), Identity<kKind, A>());
  const int rank = x.rank();
  // Output offset steps per input dim (0 on reduced dims).
  LocalDims out_steps(rank, 0);
  int64_t s = 1;
  for (int d = rank - 1; d >= 0; --d) {
    if (!reduced[d]) {
      out_steps[d] = s;
      s *= x.dim(d);
    }
  }
  const T* in = x.data<T>();
  if (x.elem_cnt() > 0) {
    const int64_t inner = rank ? x.dim(rank - 1) : 1;
    const int64_t inner_step = rank ? out_steps[rank - 1] : 0;
    LocalDims idx(rank, 0);
    int64_t o = 0;
    for (int64_t i = 0; i < x.elem_cnt(); i += inner) {
      const T* row = in + i;
      if (inner_step == 0) {
        // The last dim is reduced: four independent partial results.
        A part[4] = {Identity<kKind, A>(), Identity<kKind, A>(), Identity<kKind, A>(),
                     Identity<kKind, A>()};
        int64_t j = 0;
        for (; j + 4 <= inner; j += 4) {
          for (int k = 0; k < 4; ++k) {
            part[k] = Combine<kKind>(part[k], ConvertElement<A>(row[j + k]));
          }
        }
        for (; j < inner; ++j) part[0] = Combine<kKind>(part[0], ConvertElement<A>(row[j]));
        A r = Merge<kKind>(Merge<kKind>(part[0], part[1]), Merge<kKind>(part[2], part[3]));
        acc[o] = Merge<kKind>(acc[o], r);
      } else {
        A* dst = acc.data() + o;
        for (int64_t j = 0; j < inner; ++j) {
          dst[j] = Combine<kKind>(dst[j], ConvertElement<A>(row[j]));
        }
      }
      for (int d = rank - 2; d >= 0; --d) {
        o += out_steps[d];
        if (++idx[d] < x.dim(d)) break;
        o -= out_steps[d] * x.dim(d);
        idx[d] = 0;
      }
    }
  }
  T* out = y.data<T>();
  for (int64_t i = 0; i < y.elem_cnt(); ++i) {
    if constexpr (std::is_integral_v<T>) {
      out[i] = static_cast<T>(acc[i]);
    } else {
      out[i] = ConvertElement<T>(divisor > 0 ? acc[i] / divisor : acc[i]);
    }
  }
}

template <typename Types>
absl::Status ReduceOver(KernelContext& ctx, ReduceKind kind, const ReducePlan& plan) {
  const LocalTensor& x = ctx.input(0);
  OFS_RETURN_IF_ERROR(ctx.CheckOutput(0, plan.out_dims, x.dtype()));
  const std::vector<bool>& reduced = plan.reduced;
  const double divisor = kind == ReduceKind::kMean ? LogicalReducedCount(ctx, reduced) : 0;
  return DispatchDtype<Types>(ctx, x.dtype(), ctx.input_bn(0), [&](auto tag) {
    using T = typename decltype(tag)::type;
    LocalTensor& y = ctx.output(0);
    switch (kind) {
      case ReduceKind::kSum: Reduce<ReduceKind::kSum, T>(x, reduced, 0, y); break;
      case ReduceKind::kMean: Reduce<ReduceKind::kMean, T>(x, reduced, divisor, y); break;
      case ReduceKind::kMax: Reduce<ReduceKind::kMax, T>(x, reduced, 0, y); break;
      case ReduceKind::kMin: Reduce<ReduceKind::kMin, T>(x, reduced, 0, y); break;
      case ReduceKind::kProd: Reduce<ReduceKind::kProd, T>(x, reduced, 0, y); break;
      case ReduceKind::kNanSum: Reduce<ReduceKind::kNanSum, T>(x, reduced, 0, y); break;
    }
    return absl::OkStatus();
  });
}

template <typename Types>
KernelFn ReduceKernel(ReduceKind kind) {
  return [kind](KernelContext& ctx) -> absl::Status {
    OFS_ASSIGN_OR_RETURN(const ReducePlan plan, PlanReduce(ctx));
    return ReduceOver<Types>(ctx, kind, plan);
  };
}

// reduce_sum_like(x, like): the sum of x over axis, shaped like `like`
// (same rank: the axes kept as 1s; lower rank: dropped).
absl::Status ReduceSumLikeKernel(KernelContext& ctx) {
  OFS_ASSIGN_OR_RETURN(const ReducePlan plan, PlanReduceSumLike(ctx));
  return ReduceOver<DtypeConcat<FloatTypes, HalfTypes, IntTypes>>(ctx, ReduceKind::kSum, plan);
}

absl::Status RegisterReduceKernels(KernelRegistry& registry) {
  using Numeric = DtypeConcat<FloatTypes, HalfTypes, IntTypes>;
  using Floating = DtypeConcat<FloatTypes, HalfTypes>;
  return RegisterKernels(
      registry, DeviceType::kCpu,
      {
          {"reduce_max", ReduceKernel<Numeric>(ReduceKind::kMax), DtypesOf(Numeric{})},
          {"reduce_mean", ReduceKernel<Floating>(ReduceKind::kMean), DtypesOf(Floating{})},
          {"reduce_min", ReduceKernel<Numeric>(ReduceKind::kMin), DtypesOf(Numeric{})},
          {"reduce_nansum", ReduceKernel<Floating>(ReduceKind::kNanSum), DtypesOf(Floating{})},
          {"reduce_prod", ReduceKernel<Numeric>(ReduceKind::kProd), DtypesOf(Numeric{})},
          {"reduce_sum", ReduceKernel<Numeric>(ReduceKind::kSum), DtypesOf(Numeric{})},
          {"reduce_sum_like", ReduceSumLikeKernel, DtypesOf(Numeric{})},
      });
}

OFS_REGISTER_KERNELS(RegisterReduceKernels);

}  // namespace
}  // namespace oneflow_sbp::kernels
