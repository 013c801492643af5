// CPU kernels of the elementwise family (rules in ops/elementwise_ops.cc):
// the unary math ops, identity and copy, the scalar ops and cast.
//
// Every one maps each local element on its own, so the layout does not
// matter: S blocks, B copies and P addends alike go through the same loop
// (rules only allow P for the linear ones: negative, identity, copy,
// scalar_mul, scalar_div, cast). f16/bf16 compute in float.
//
// Dtypes (kUnimplemented for the others, naming op and dtype):
//   float math (ceil cos erf exp floor log reciprocal round rsqrt sigmoid
//     sin sqrt tanh gelu fast_gelu mish silu softplus): f32 f64 f16 bf16
//   abs negative relu sign square: those and i32 i64 (integers wrap)
//   logical_not: bool, f32 f64 f16 bf16 i32 i64 (1 where x == 0)
//   identity, copy, cast: every dtype
//   scalar_add/mul/floordiv/fmod/pow: f32 f64 f16 bf16 i32 i64
//   scalar_div: f32 f64 f16 bf16 (true division; the P -> P candidate
//     would be wrong under integer truncation)
// Scalar ops take the int operand when has_int_operand is set, else the
// float one (OneFlow's order); an integer tensor with a float operand is
// kUnimplemented (its result dtype would be floating). Integer division and
// fmod by 0, and an integer pow with a negative exponent, are
// kInvalidArgument.
#include <cmath>
#include <cstdint>
#include <cstring>
#include <type_traits>
#include <vector>

#include "absl/strings/str_cat.h"
#include "oneflow_sbp/values/status_macros.h"
#include "kernels/cpu/gelu_simd.h"
#include "kernels/common/int_arith.h"
#include "kernels/common/scalar_args.h"
#include "kernels/common/select_args.h"
#include "kernels/dtype_dispatch.h"
#include "kernels/kernel_registry.h"

namespace oneflow_sbp::kernels {
namespace {

// ------------------------------------------------------------ unary math --

template <typename C>
C Sigmoid(C x) {
  return C(1) / (C(1) + std::exp(-x));
}

template <typename C>
C Softplus(C x) {  // log(1 + e^x) without overflow
  return std::max(x, C(0)) + std::log1p(std::exp(-std::abs(x)));
}

struct Abs {
  template <typename C> C operator()(C x) const { return x < C(0) ? WrapNeg(x) : x; }
};
struct Ceil {
  template <typename C> C operator()(C x) const { return std::ceil(x); }
};
struct Cos {
  template <typename C> C operator()(C x) const { return std::cos(x); }
};
struct Erf {
  template <typename C> C operator()(C x) const { return std::erf(x); }
};
struct Exp {
  template <typename C> C operator()(C x) const { return std::exp(x); }
};
struct Floor {
  template <typename C> C operator()(C x) const { return std::floor(x); }
};
struct Log {
  template <typename C> C operator()(C x) const { return std::log(x); }
};
struct Negative {
  template <typename C> C operator()(C x) const { return WrapNeg(x); }
};
struct Reciprocal {
  template <typename C> C operator()(C x) const { return C(1) / x; }
};
struct Relu {
  template <typename C> C operator()(C x) const { return x < C(0) ? C(0) : x; }
};
struct Round {  // half to even, as torch.round
  template <typename C> C operator()(C x) const { return std::nearbyint(x); }
};
struct Rsqrt {
  template <typename C> C operator()(C x) const { return C(1) / std::sqrt(x); }
};
struct SigmoidFn {
  template <typename C> C operator()(C x) const { return Sigmoid(x); }
};
struct Sign {
  template <typename C> C operator()(C x) const {
    if constexpr (!std::is_integral_v<C>) {
      if (std::isnan(x)) return x;
    }
    return C((C(0) < x) - (x < C(0)));
  }
};
struct Sin {
  template <typename C> C operator()(C x) const { return std::sin(x); }
};
struct Sqrt {
  template <typename C> C operator()(C x) const { return std::sqrt(x); }
};
struct Square {
  template <typename C> C operator()(C x) const { return WrapMul(x, x); }
};
struct Tanh {
  template <typename C> C operator()(C x) const { return std::tanh(x); }
};
struct Gelu {  // exact: x * Phi(x)
  template <typename C> C operator()(C x) const {
    return C(0.5) * x * (C(1) + std::erf(x * C(M_SQRT1_2)));
  }
};
struct FastGelu {  // tanh approximation
  template <typename C> C operator()(C x) const {
    const C k = C(0.7978845608028654);  // sqrt(2 / pi)
    return C(0.5) * x * (C(1) + std::tanh(k * (x + C(0.044715) * x * x * x)));
  }
};
struct Mish {
  template <typename C> C operator()(C x) const { return x * std::tanh(Softplus(x)); }
};
struct Silu {
  template <typename C> C operator()(C x) const { return x * Sigmoid(x); }
};
struct SoftplusFn {
  template <typename C> C operator()(C x) const { return Softplus(x); }
};
struct LogicalNot {
  template <typename C> C operator()(C x) const { return C(x == C(0)); }
};

template <typename Fn, typename Types>
absl::Status UnaryKernel(KernelContext& ctx) {
  const LocalTensor& x = ctx.input(0);
  OFS_RETURN_IF_ERROR(ctx.CheckOutput(0, x.dims(), x.dtype()));
  LocalTensor& y = ctx.output(0);
  return DispatchDtype<Types>(ctx, x.dtype(), ctx.input_bn(0), [&](auto tag) {
    using T = typename decltype(tag)::type;
    using C = ComputeType<T>;
    const T* in = x.data<T>();
    T* out = y.data<T>();
    if constexpr (std::is_same_v<Fn, Gelu> && std::is_same_v<T, float>) {
      if (GeluF32Simd(in, out, x.elem_cnt())) return absl::OkStatus();
    }
    const Fn fn;
    for (int64_t i = 0; i < x.elem_cnt(); ++i) {
      out[i] = ConvertElement<T>(fn(ConvertElement<C>(in[i])));
    }
    return absl::OkStatus();
  });
}

// identity, copy: the bytes.
absl::Status CopyKernel(KernelContext& ctx) {
  const LocalTensor& x = ctx.input(0);
  OFS_RETURN_IF_ERROR(ctx.CheckOutput(0, x.dims(), x.dtype()));
  std::memcpy(ctx.output(0).raw_data(), x.raw_data(), static_cast<size_t>(x.byte_size()));
  return absl::OkStatus();
}

// ------------------------------------------------------------ scalar ops --

template <typename C>
C ApplyScalar(ScalarOp op, C x, C b) {
  switch (op) {
    case ScalarOp::kAdd: return WrapAdd(x, b);
    case ScalarOp::kMul: return WrapMul(x, b);
    case ScalarOp::kDiv: return x / b;
    case ScalarOp::kFloorDiv: return FloorDiv(x, b);
    case ScalarOp::kFmod: return Fmod(x, b);
    case ScalarOp::kPow:
      if constexpr (std::is_integral_v<C>) {
        return IntPow(x, b);
      } else {
        return std::pow(x, b);
      }
  }
  return x;
}

template <typename Types>
KernelFn ScalarKernel(ScalarOp op) {
  return [op](KernelContext& ctx) -> absl::Status {
    const LocalTensor& x = ctx.input(0);
    OFS_RETURN_IF_ERROR(ctx.CheckOutput(0, x.dims(), x.dtype()));
    // Operand checks shared with the CUDA glue (scalar_args.h).
    OFS_ASSIGN_OR_RETURN(const ScalarOperand s, CheckScalarOperand(ctx, op));
    LocalTensor& y = ctx.output(0);
    return DispatchDtype<Types>(ctx, x.dtype(), ctx.input_bn(0), [&](auto tag) -> absl::Status {
      using T = typename decltype(tag)::type;
      using C = ComputeType<T>;
      const C b = s.As<C>();
      const T* in = x.data<T>();
      T* out = y.data<T>();
      for (int64_t i = 0; i < x.elem_cnt(); ++i) {
        out[i] = ConvertElement<T>(ApplyScalar(op, ConvertElement<C>(in[i]), b));
      }
      return absl::OkStatus();
    });
  };
}

// ------------------------------------------------------------------ cast --

absl::Status CastKernel(KernelContext& ctx) {
  const LocalTensor& x = ctx.input(0);
  OFS_ASSIGN_OR_RETURN(const DataType to, CheckCast(ctx));  // select_args.h
  LocalTensor& y = ctx.output(0);
  VisitDataType(x.dtype(), [&](auto in_tag) {
    using In = typename decltype(in_tag)::type;
    VisitDataType(to, [&](auto out_tag) {
      using Out = typename decltype(out_tag)::type;
      const In* in = x.data<In>();
      Out* out = y.data<Out>();
      for (int64_t i = 0; i < x.elem_cnt(); ++i) out[i] = ConvertElement<Out>(in[i]);
    });
  });
  return absl::OkStatus();
}

// ---------------------------------------------------------- registration --

template <typename Fn, typename Types>
KernelDef Unary(const char* op) {
  return KernelDef{op, UnaryKernel<Fn, Types>, DtypesOf(Types{})};
}

template <typename Types>
KernelDef Scalar(const char* op, ScalarOp kind) {
  return KernelDef{op, ScalarKernel<Types>(kind), DtypesOf(Types{})};
}

absl::Status RegisterElementwiseKernels(KernelRegistry& registry) {
  using Floating = DtypeConcat<FloatTypes, HalfTypes>;
  using Signed = DtypeConcat<FloatTypes, HalfTypes, IntTypes>;
  using Logical = DtypeConcat<BoolType, FloatTypes, HalfTypes, IntTypes>;
  const std::vector<DataType> all = DtypesOf(AllTypes{});
  const KernelDef kernels[] = {
      Unary<Abs, Signed>("abs"),
      Unary<Ceil, Floating>("ceil"),
      Unary<Cos, Floating>("cos"),
      Unary<Erf, Floating>("erf"),
      Unary<Exp, Floating>("exp"),
      Unary<FastGelu, Floating>("fast_gelu"),
      Unary<Floor, Floating>("floor"),
      Unary<Gelu, Floating>("gelu"),
      Unary<Log, Floating>("log"),
      Unary<LogicalNot, Logical>("logical_not"),
      Unary<Mish, Floating>("mish"),
      Unary<Negative, Signed>("negative"),
      Unary<Reciprocal, Floating>("reciprocal"),
      Unary<Relu, Signed>("relu"),
      Unary<Round, Floating>("round"),
      Unary<Rsqrt, Floating>("rsqrt"),
      Unary<SigmoidFn, Floating>("sigmoid"),
      Unary<Sign, Signed>("sign"),
      Unary<Silu, Floating>("silu"),
      Unary<Sin, Floating>("sin"),
      Unary<SoftplusFn, Floating>("softplus"),
      Unary<Sqrt, Floating>("sqrt"),
      Unary<Square, Signed>("square"),
      Unary<Tanh, Floating>("tanh"),
      KernelDef{"cast", CastKernel, all},
      KernelDef{"copy", CopyKernel, all},
      KernelDef{"identity", CopyKernel, all},
      Scalar<Signed>("scalar_add", ScalarOp::kAdd),
      Scalar<Floating>("scalar_div", ScalarOp::kDiv),
      Scalar<Signed>("scalar_floordiv", ScalarOp::kFloorDiv),
      Scalar<Signed>("scalar_fmod", ScalarOp::kFmod),
      Scalar<Signed>("scalar_mul", ScalarOp::kMul),
      Scalar<Signed>("scalar_pow", ScalarOp::kPow),
  };
  return RegisterKernels(registry, DeviceType::kCpu, kernels);
}

OFS_REGISTER_KERNELS(RegisterElementwiseKernels);

}  // namespace
}  // namespace oneflow_sbp::kernels
