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
#include "oneflow_sbp/status_macros.h"
#include "ops/kernels/cpu/broadcast_loop.h"
#include "ops/kernels/cpu/int_arith.h"
#include "ops/kernels/dtype_dispatch.h"
#include "ops/kernels/kernel_registry.h"

namespace oneflow_sbp::kernels {
namespace {

using Signed = DtypeConcat<FloatTypes, HalfTypes, IntTypes>;
using Floating = DtypeConcat<FloatTypes, HalfTypes>;
using Comparable = DtypeConcat<FloatTypes, HalfTypes, IntTypes, BoolType>;

enum class BinaryOp {
  kAdd, kSub, kMul, kDiv, kMaximum, kMinimum, kPow, kFmod,
  kEqual, kNotEqual, kGreater, kGreaterEqual, kLess, kLessEqual,
};

bool IsComparison(BinaryOp op) { return op >= BinaryOp::kEqual; }

// Arithmetic in C; `bad` is set for integer fmod by 0 and negative powers.
template <typename C>
C Arith(BinaryOp op, C a, C b, bool* bad) {
  switch (op) {
    case BinaryOp::kAdd: return WrapAdd(a, b);
    case BinaryOp::kSub: return WrapSub(a, b);
    case BinaryOp::kMul: return WrapMul(a, b);
    case BinaryOp::kDiv: return a / b;
    case BinaryOp::kMaximum:
      if constexpr (!std::is_integral_v<C>) {
        if (std::isnan(a) || std::isnan(b)) return std::isnan(a) ? a : b;
      }
      return a < b ? b : a;
    case BinaryOp::kMinimum:
      if constexpr (!std::is_integral_v<C>) {
        if (std::isnan(a) || std::isnan(b)) return std::isnan(a) ? a : b;
      }
      return b < a ? b : a;
    case BinaryOp::kPow:
      if constexpr (std::is_integral_v<C>) {
        if (b < 0) {
          *bad = true;
          return C(0);
        }
        return IntPow(a, b);
      } else {
        return std::pow(a, b);
      }
    case BinaryOp::kFmod:
      if constexpr (std::is_integral_v<C>) {
        if (b == 0) {
          *bad = true;
          return C(0);
        }
      }
      return Fmod(a, b);
    default: return C(0);
  }
}

template <typename C>
bool Compare(BinaryOp op, C a, C b) {
  switch (op) {
    case BinaryOp::kEqual: return a == b;
    case BinaryOp::kNotEqual: return a != b;
    case BinaryOp::kGreater: return a > b;
    case BinaryOp::kGreaterEqual: return a >= b;
    case BinaryOp::kLess: return a < b;
    default: return a <= b;
  }
}

template <typename Types>
KernelFn BroadcastBinaryKernel(BinaryOp op) {
  return [op](KernelContext& ctx) -> absl::Status {
    const LocalTensor& x = ctx.input(0);
    const LocalTensor& y = ctx.input(1);
    if (x.dtype() != y.dtype()) {
      return ctx.Internal(absl::StrCat("x_0 is ", DataTypeName(x.dtype()), " but y_0 is ",
                                       DataTypeName(y.dtype())));
    }
    OFS_ASSIGN_OR_RETURN(BroadcastPlan plan, PlanBroadcast(ctx, {0, 1}, 0));
    const DataType out_dtype = IsComparison(op) ? DataType::kBool : x.dtype();
    OFS_RETURN_IF_ERROR(ctx.CheckOutput(0, plan.out_dims, out_dtype));
    LocalTensor& z = ctx.output(0);
    return DispatchDtype<Types>(ctx, x.dtype(), "x_0", [&](auto tag) -> absl::Status {
      using T = typename decltype(tag)::type;
      using C = ComputeType<T>;
      const T* a = x.data<T>();
      const T* b = y.data<T>();
      bool bad = false;
      if (IsComparison(op)) {
        bool* out = z.data<bool>();
        ForEachBroadcastRun(plan, [&](int64_t o, const int64_t* in, int64_t n, const int64_t* st) {
          for (int64_t j = 0; j < n; ++j) {
            out[o + j] = Compare(op, ConvertElement<C>(a[in[0] + j * st[0]]),
                                 ConvertElement<C>(b[in[1] + j * st[1]]));
          }
        });
      } else if constexpr (!std::is_same_v<T, bool>) {
        T* out = z.data<T>();
        ForEachBroadcastRun(plan, [&](int64_t o, const int64_t* in, int64_t n, const int64_t* st) {
          for (int64_t j = 0; j < n; ++j) {
            out[o + j] = ConvertElement<T>(Arith(op, ConvertElement<C>(a[in[0] + j * st[0]]),
                                                 ConvertElement<C>(b[in[1] + j * st[1]]), &bad));
          }
        });
      }
      if (bad) {
        return ctx.InvalidArgument(op == BinaryOp::kPow
                                       ? "integer power with a negative exponent in y_0"
                                       : "integer fmod by 0 in y_0");
      }
      return absl::OkStatus();
    });
  };
}

// out = condition ? x : y.
absl::Status WhereKernel(KernelContext& ctx) {
  const LocalTensor& cond = ctx.input(0);
  const LocalTensor& x = ctx.input(1);
  const LocalTensor& y = ctx.input(2);
  if (cond.dtype() != DataType::kBool) return ctx.UnsupportedDtype(cond.dtype(), "condition_0");
  if (x.dtype() != y.dtype()) {
    return ctx.Internal(absl::StrCat("x_0 is ", DataTypeName(x.dtype()), " but y_0 is ",
                                     DataTypeName(y.dtype())));
  }
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
  const LocalTensor& first = ctx.input(0);
  for (int i = 1; i < ctx.num_inputs(); ++i) {
    if (ctx.input(i).dims() != first.dims() || ctx.input(i).dtype() != first.dtype()) {
      return ctx.Internal(absl::StrCat("local ", ctx.input_bn(i), " ",
                                       DataTypeName(ctx.input(i).dtype()),
                                       DimsToString(ctx.input(i).dims()), " differs from in_0 ",
                                       DataTypeName(first.dtype()), DimsToString(first.dims())));
    }
  }
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

absl::Status RegisterBinaryKernels(KernelRegistry& registry) {
  const std::pair<const char*, BinaryOp> arith[] = {
      {"broadcast_add", BinaryOp::kAdd},         {"broadcast_sub", BinaryOp::kSub},
      {"broadcast_mul", BinaryOp::kMul},         {"broadcast_maximum", BinaryOp::kMaximum},
      {"broadcast_minimum", BinaryOp::kMinimum}, {"broadcast_pow", BinaryOp::kPow},
      {"broadcast_fmod", BinaryOp::kFmod},
  };
  const std::pair<const char*, BinaryOp> compare[] = {
      {"broadcast_equal", BinaryOp::kEqual},     {"broadcast_not_equal", BinaryOp::kNotEqual},
      {"broadcast_greater", BinaryOp::kGreater}, {"broadcast_greater_equal", BinaryOp::kGreaterEqual},
      {"broadcast_less", BinaryOp::kLess},       {"broadcast_less_equal", BinaryOp::kLessEqual},
  };
  std::vector<KernelDef> kernels;
  for (const auto& [op, kind] : arith) {
    kernels.push_back({op, BroadcastBinaryKernel<Signed>(kind), DtypesOf(Signed{})});
  }
  for (const auto& [op, kind] : compare) {
    kernels.push_back({op, BroadcastBinaryKernel<Comparable>(kind), DtypesOf(Comparable{})});
  }
  kernels.push_back({"broadcast_div", BroadcastBinaryKernel<Floating>(BinaryOp::kDiv),
                     DtypesOf(Floating{})});
  kernels.push_back({"where", WhereKernel, DtypesOf(Comparable{})});
  kernels.push_back({"add_n", AddNKernel, DtypesOf(Signed{})});
  return RegisterKernels(registry, DeviceType::kCpu, kernels);
}

OFS_REGISTER_KERNELS(RegisterBinaryKernels);

}  // namespace
}  // namespace oneflow_sbp::kernels
