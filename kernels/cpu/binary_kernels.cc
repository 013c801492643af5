// CPU kernels of the broadcasting ops: broadcast_<op>(x, y) -> z (rules in
// ops/binary_ops.cc), where(condition, x, y) and add_n (ops/index_ops.cc,
// ops/binary_ops.cc).
//
// Each rank combines its local operands with NumPy broadcasting decided by
// the LOGICAL shapes (broadcast_loop.h). That is right for every split the
// rules emit (aligned dims split alike, broadcast operands held whole), and
// for partial operands where the op is linear: add/sub of two addends,
// mul of an addend by a whole operand, div of an addend by a whole
// denominator, where's select between two addends.
//
// Dtypes (kUnimplemented otherwise):
//   add sub mul maximum minimum pow fmod: f32 f64 f16 bf16 i32 i64
//   div: f32 f64 f16 bf16 (true division; x:P y:B -> z:P would be wrong
//     under integer truncation)
//   equal not_equal greater greater_equal less less_equal: those and bool,
//     with a bool result
//   where: x, y of f32 f64 f16 bf16 i32 i64 bool; condition bool
//   add_n: f32 f64 f16 bf16 i32 i64
// f16/bf16 compute in float; integers wrap. maximum/minimum propagate
// NaN. Integer fmod by 0 and integer pow with a negative exponent are
// kInvalidArgument naming the op.
#include <cmath>
#include <cstdint>
#include <vector>

#include "absl/strings/str_cat.h"
#include "oneflow_sbp/values/status_macros.h"
#include "kernels/common/broadcast_loop.h"
#include "kernels/common/int_arith.h"
#include "kernels/common/same_operands.h"
#include "kernels/common/select_args.h"
#include "kernels/dtype_dispatch.h"
#include "kernels/kernel_registry.h"

namespace oneflow_sbp::kernels {
namespace {

using Signed = DtypeConcat<FloatTypes, HalfTypes, IntTypes>;
using Floating = DtypeConcat<FloatTypes, HalfTypes>;
using Comparable = DtypeConcat<FloatTypes, HalfTypes, IntTypes, BoolType>;

enum class BinaryOp {
  kAdd, kSub, kMul, kDiv, kMaximum, kMinimum, kPow, kFmod,
  kEqual, kNotEqual, kGreater, kGreaterEqual, kLess, kLessEqual,
};

constexpr bool IsComparison(BinaryOp op) { return op >= BinaryOp::kEqual; }

// z = op(a, b) in C, chosen at compile time so that the loops vectorize;
// `bad` is set for integer fmod by 0 and negative integer powers.
template <BinaryOp kOp, typename C>
auto Apply(C a, C b, bool* bad) {
  if constexpr (kOp == BinaryOp::kAdd) {
    return WrapAdd(a, b);
  } else if constexpr (kOp == BinaryOp::kSub) {
    return WrapSub(a, b);
  } else if constexpr (kOp == BinaryOp::kMul) {
    return WrapMul(a, b);
  } else if constexpr (kOp == BinaryOp::kDiv) {
    return a / b;
  } else if constexpr (kOp == BinaryOp::kMaximum || kOp == BinaryOp::kMinimum) {
    if constexpr (!std::is_integral_v<C>) {
      if (std::isnan(a) || std::isnan(b)) return std::isnan(a) ? a : b;
    }
    return (kOp == BinaryOp::kMaximum) == (a < b) ? b : a;
  } else if constexpr (kOp == BinaryOp::kPow) {
    if constexpr (std::is_integral_v<C>) {
      if (b < 0) *bad = true;
      return b < 0 ? C(0) : IntPow(a, b);
    } else {
      return std::pow(a, b);
    }
  } else if constexpr (kOp == BinaryOp::kFmod) {
    if constexpr (std::is_integral_v<C>) {
      if (b == 0) *bad = true;
      return b == 0 ? C(0) : Fmod(a, b);
    } else {
      return Fmod(a, b);
    }
  } else if constexpr (kOp == BinaryOp::kEqual) {
    return a == b;
  } else if constexpr (kOp == BinaryOp::kNotEqual) {
    return a != b;
  } else if constexpr (kOp == BinaryOp::kGreater) {
    return a > b;
  } else if constexpr (kOp == BinaryOp::kGreaterEqual) {
    return a >= b;
  } else if constexpr (kOp == BinaryOp::kLess) {
    return a < b;
  } else {
    return a <= b;
  }
}

// out[j] = f(a[j * sa], b[j * sb]) for j < n, with the common stride
// patterns spelled out so the compiler vectorizes them.
template <typename Out, typename In, typename F>
void RunBinary(Out* out, const In* a, int64_t sa, const In* b, int64_t sb, int64_t n, F&& f) {
  if (sa == 1 && sb == 1) {
    for (int64_t j = 0; j < n; ++j) out[j] = f(a[j], b[j]);
  } else if (sa == 1 && sb == 0) {
    const In bv = b[0];
    for (int64_t j = 0; j < n; ++j) out[j] = f(a[j], bv);
  } else if (sa == 0 && sb == 1) {
    const In av = a[0];
    for (int64_t j = 0; j < n; ++j) out[j] = f(av, b[j]);
  } else {
    for (int64_t j = 0; j < n; ++j) out[j] = f(a[j * sa], b[j * sb]);
  }
}

template <typename Types, BinaryOp kOp>
absl::Status BroadcastBinaryKernel(KernelContext& ctx) {
  const LocalTensor& x = ctx.input(0);
  const LocalTensor& y = ctx.input(1);
  OFS_RETURN_IF_ERROR(CheckSameDtype(ctx, 0, 1));  // select_args.h, shared with CUDA
  OFS_ASSIGN_OR_RETURN(BroadcastPlan plan, PlanBroadcast(ctx, {0, 1}, 0));
  const DataType out_dtype = IsComparison(kOp) ? DataType::kBool : x.dtype();
  OFS_RETURN_IF_ERROR(ctx.CheckOutput(0, plan.out_dims, out_dtype));
  LocalTensor& z = ctx.output(0);
  return DispatchDtype<Types>(ctx, x.dtype(), "x_0", [&](auto tag) -> absl::Status {
    using T = typename decltype(tag)::type;
    using C = ComputeType<T>;
    using Out = std::conditional_t<IsComparison(kOp), bool, T>;
    if constexpr (!IsComparison(kOp) && std::is_same_v<T, bool>) {
      return ctx.UnsupportedDtype(x.dtype(), "x_0");
    } else {
      const T* a = x.data<T>();
      const T* b = y.data<T>();
      Out* out = z.data<Out>();
      bool bad = false;
      ForEachBroadcastRun(plan, [&](int64_t o, const int64_t* in, int64_t n, const int64_t* st) {
        RunBinary(out + o, a + in[0], st[0], b + in[1], st[1], n, [&bad](T u, T v) {
          return ConvertElement<Out>(
              Apply<kOp>(ConvertElement<C>(u), ConvertElement<C>(v), &bad));
        });
      });
      if (bad) {
        return ctx.InvalidArgument(kOp == BinaryOp::kPow
                                       ? "integer power with a negative exponent in y_0"
                                       : "integer fmod by 0 in y_0");
      }
      return absl::OkStatus();
    }
  });
}

// out = condition ? x : y.
absl::Status WhereKernel(KernelContext& ctx) {
  const LocalTensor& cond = ctx.input(0);
  const LocalTensor& x = ctx.input(1);
  const LocalTensor& y = ctx.input(2);
  OFS_RETURN_IF_ERROR(CheckWhereOperands(ctx));  // select_args.h, shared with CUDA
  OFS_ASSIGN_OR_RETURN(BroadcastPlan plan, PlanBroadcast(ctx, {0, 1, 2}, 0));
  OFS_RETURN_IF_ERROR(ctx.CheckOutput(0, plan.out_dims, x.dtype()));
  LocalTensor& out = ctx.output(0);
  return DispatchDtype<Comparable>(ctx, x.dtype(), "x_0", [&](auto tag) {
    using T = typename decltype(tag)::type;
    const bool* c = cond.data<bool>();
    const T* a = x.data<T>();
    const T* b = y.data<T>();
    T* o = out.data<T>();
    ForEachBroadcastRun(plan, [&](int64_t off, const int64_t* in, int64_t n, const int64_t* st) {
      for (int64_t j = 0; j < n; ++j) {
        o[off + j] = c[in[0] + j * st[0]] ? a[in[1] + j * st[1]] : b[in[2] + j * st[2]];
      }
    });
    return absl::OkStatus();
  });
}

// out = in_0 + in_1 + ... (identical local shapes).
absl::Status AddNKernel(KernelContext& ctx) {
  OFS_RETURN_IF_ERROR(CheckSameOperands(ctx));
  const LocalTensor& first = ctx.input(0);
  OFS_RETURN_IF_ERROR(ctx.CheckOutput(0, first.dims(), first.dtype()));
  LocalTensor& out = ctx.output(0);
  return DispatchDtype<Signed>(ctx, first.dtype(), "in_0", [&](auto tag) {
    using T = typename decltype(tag)::type;
    using C = ComputeType<T>;
    std::vector<C> acc(static_cast<size_t>(first.elem_cnt()), C(0));
    for (int i = 0; i < ctx.num_inputs(); ++i) {
      const T* in = ctx.input(i).data<T>();
      for (size_t e = 0; e < acc.size(); ++e) acc[e] = WrapAdd(acc[e], ConvertElement<C>(in[e]));
    }
    T* o = out.data<T>();
    for (size_t e = 0; e < acc.size(); ++e) o[e] = ConvertElement<T>(acc[e]);
    return absl::OkStatus();
  });
}

template <BinaryOp kOp, typename Types>
KernelDef Binary(const char* op) {
  return KernelDef{op, BroadcastBinaryKernel<Types, kOp>, DtypesOf(Types{})};
}

absl::Status RegisterBinaryKernels(KernelRegistry& registry) {
  using Op = BinaryOp;
  return RegisterKernels(registry, DeviceType::kCpu,
                         {
                             Binary<Op::kAdd, Signed>("broadcast_add"),
                             Binary<Op::kSub, Signed>("broadcast_sub"),
                             Binary<Op::kMul, Signed>("broadcast_mul"),
                             Binary<Op::kDiv, Floating>("broadcast_div"),
                             Binary<Op::kMaximum, Signed>("broadcast_maximum"),
                             Binary<Op::kMinimum, Signed>("broadcast_minimum"),
                             Binary<Op::kPow, Signed>("broadcast_pow"),
                             Binary<Op::kFmod, Signed>("broadcast_fmod"),
                             Binary<Op::kEqual, Comparable>("broadcast_equal"),
                             Binary<Op::kNotEqual, Comparable>("broadcast_not_equal"),
                             Binary<Op::kGreater, Comparable>("broadcast_greater"),
                             Binary<Op::kGreaterEqual, Comparable>("broadcast_greater_equal"),
                             Binary<Op::kLess, Comparable>("broadcast_less"),
                             Binary<Op::kLessEqual, Comparable>("broadcast_less_equal"),
                             KernelDef{"where", WhereKernel, DtypesOf(Comparable{})},
                             KernelDef{"add_n", AddNKernel, DtypesOf(Signed{})},
                         });
}

OFS_REGISTER_KERNELS(RegisterBinaryKernels);

}  // namespace
}  // namespace oneflow_sbp::kernels
