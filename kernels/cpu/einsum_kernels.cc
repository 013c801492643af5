// CPU kernel of einsum (rule in ops/matmul_ops.cc, candidates from the
// einsum rule generator): the contraction of the local shards, summed in
// double. Every candidate is local arithmetic: a letter split alike on
// every operand that carries it gives the rank its block of those letters
// (of the output's, when the output carries it); a contracted letter split
// on every operand gives the rank an addend of the output (P); one operand
// P with the others B gives an addend too, since the einsum is linear in
// each operand. So the kernel never communicates.
//
// Work is the product of every letter's local extent; the loops are plain
// (the contraction a matmul names goes through the matmul ops' GEMM).
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "ops/einsum_rule.h"
#include "kernels/cpu/gemm.h"
#include "kernels/dtype_dispatch.h"
#include "kernels/kernel_registry.h"
#include "oneflow_sbp/values/status_macros.h"
#include "oneflow_sbp/values/quoted_input.h"

namespace oneflow_sbp::kernels {
namespace {

using Floating = DtypeConcat<FloatTypes, HalfTypes>;

absl::Status EinsumKernel(KernelContext& ctx) {
  const std::string equation = ctx.Attr<std::string>("equation");
  absl::StatusOr<ops::EinsumSpec> spec = ops::ParseEinsum(equation);
  if (!spec.ok()) return ctx.InvalidArgument(std::string(spec.status().message()));
  const int n = ctx.num_inputs();
  if (n != static_cast<int>(spec->inputs.size())) {
    return ctx.InvalidArgument(absl::StrCat("equation ", QuotedInput(equation), " has ",
                                            spec->inputs.size(), " operands; got ", n));
  }
  // Letters, their local extents (from whichever operand carries them).
  std::string letters;
  std::vector<int64_t> extent;
  auto letter_index = [&](char c) {
    const size_t at = letters.find(c);
    if (at != std::string::npos) return static_cast<int>(at);
    letters.push_back(c);
    extent.push_back(-1);
    return static_cast<int>(letters.size()) - 1;
  };
  std::vector<std::vector<int>> operand_letters(n);
  for (int i = 0; i < n; ++i) {
    const LocalTensor& t = ctx.input(i);
    if (t.rank() != static_cast<int>(spec->inputs[i].size())) {
      return ctx.InvalidArgument(absl::StrCat(ctx.input_bn(i), " has ", t.rank(),
                                              " dims; equation ", QuotedInput(equation), " gives it ",
                                              spec->inputs[i].size()));
    }
    for (int d = 0; d < t.rank(); ++d) {
      const int l = letter_index(spec->inputs[i][d]);
      if (extent[l] >= 0 && extent[l] != t.dim(d)) {
        return ctx.InvalidArgument(absl::StrCat("letter '", std::string(1, letters[l]),
                                                "' has local extents ", extent[l], " and ",
                                                t.dim(d)));
      }
      extent[l] = t.dim(d);
      operand_letters[i].push_back(l);
    }
  }
  std::vector<int> out_letters;
  std::vector<int64_t> out_dims;
  for (char c : spec->output) {
    const int l = letter_index(c);
    out_letters.push_back(l);
    out_dims.push_back(extent[l]);
  }
  OFS_RETURN_IF_ERROR(ctx.CheckOutput(0, out_dims, ctx.input(0).dtype()));
  const int num_letters = static_cast<int>(letters.size());
  // Row-major strides of every operand and the output over the letters.
  auto strides_of = [&](const std::vector<int>& ls) {
    std::vector<int64_t> st(num_letters, 0);
    int64_t s = 1;
    for (int d = static_cast<int>(ls.size()) - 1; d >= 0; --d) {
      st[ls[d]] = s;
      s *= extent[ls[d]];
    }
    return st;
  };
  std::vector<std::vector<int64_t>> in_strides;
  for (int i = 0; i < n; ++i) in_strides.push_back(strides_of(operand_letters[i]));
  const std::vector<int64_t> out_strides = strides_of(out_letters);
  // Typed pointers only (no GetDouble): a device-emulating test runs CPU
  // kernels on buffers marked as another device.
  const DataType dtype = ctx.input(0).dtype();
  for (int i = 1; i < n; ++i) {
    if (ctx.input(i).dtype() != dtype) {
      return ctx.InvalidArgument(absl::StrCat(ctx.input_bn(i), " is ",
                                              DataTypeName(ctx.input(i).dtype()), "; in_0 is ",
                                              DataTypeName(dtype)));
    }
  }
  std::vector<std::vector<double>> in(n);
  OFS_RETURN_IF_ERROR(DispatchDtype<Floating>(ctx, dtype, "in_0", [&](auto tag) -> absl::Status {
    using T = typename decltype(tag)::type;
    for (int i = 0; i < n; ++i) {
      const ComputeInput<T> v(ctx.input(i));
      in[i].assign(v.data(), v.data() + ctx.input(i).elem_cnt());
    }
    return absl::OkStatus();
  }));
  std::vector<double> out(ctx.output(0).elem_cnt(), 0.0);
  int64_t total = 1;
  for (int64_t e : extent) total *= e;
  std::vector<int64_t> idx(num_letters, 0);
  for (int64_t step = 0; step < total; ++step) {
    double prod = 1;
    for (int i = 0; i < n; ++i) {
      int64_t off = 0;
      for (int l : operand_letters[i]) off += idx[l] * in_strides[i][l];
      prod *= in[i][off];
    }
    int64_t o = 0;
    for (int l : out_letters) o += idx[l] * out_strides[l];
    out[o] += prod;
    for (int l = num_letters - 1; l >= 0; --l) {
      if (++idx[l] < extent[l]) break;
      idx[l] = 0;
    }
  }
  LocalTensor& y = ctx.output(0);
  return DispatchDtype<Floating>(ctx, y.dtype(), "in_0", [&](auto tag) -> absl::Status {
    using T = typename decltype(tag)::type;
    using C = ComputeType<T>;
    ComputeOutput<T> o(y);
    for (int64_t i = 0; i < y.elem_cnt(); ++i) o.data()[i] = static_cast<C>(out[i]);
    o.Finish();
    return absl::OkStatus();
  });
}

absl::Status RegisterEinsumKernels(KernelRegistry& registry) {
  return RegisterKernels(registry, DeviceType::kCpu,
                         {{"einsum", EinsumKernel, DtypesOf(Floating{})}});
}

OFS_REGISTER_KERNELS(RegisterEinsumKernels);

}  // namespace
}  // namespace oneflow_sbp::kernels
