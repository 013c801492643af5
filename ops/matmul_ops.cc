// The matmul family (SPEC.md §6): matmul (2-D x 2-D), batch_matmul (equal
// ranks >= 3, equal batch dims) and broadcast_matmul (batch dims broadcast
// NumPy-style). All three share one candidate generator for the matrix
// part — OneFlow copies it three times — and the optional
// `_add_to_output` input always takes `out`'s SBP.
//
// Matrix candidates, with m/k axes of a and k/n axes of b taken from each
// operand's own rank and transpose flags:
//   1) a:S(m) b:B    -> out:S(rows)    row-parallel
//   2) a:B    b:S(n) -> out:S(cols)    column-parallel
//   3) a:S(k) b:S(k) -> out:P          contraction split
//   4) a:P    b:B    -> out:P          linear in a
//   5) a:B    b:P    -> out:P          linear in b
#include "ops/matmul_ops.h"

#include <algorithm>
#include <vector>

#include "absl/strings/str_cat.h"
#include "oneflow_sbp/sbp_context.h"
#include "ops/einsum_rule.h"
#include "ops/op_util.h"
#include "oneflow_sbp/quoted_input.h"

namespace oneflow_sbp::ops {
namespace {

const OpArg kA{"a", 0};
const OpArg kB{"b", 0};
const OpArg kOut{"out", 0};
const OpArg kAddTo{"_add_to_output", 0};

// Builders set `_add_to_output` together with `out`; absent, it is skipped.
void EmitMatrixCandidates(SbpContext& ctx, int rank_a, int rank_b, int rank_out) {
  const bool ta = ctx.Attr<bool>("transpose_a");
  const bool tb = ctx.Attr<bool>("transpose_b");
  const int m_a = ta ? rank_a - 1 : rank_a - 2;
  const int k_a = ta ? rank_a - 2 : rank_a - 1;
  const int k_b = tb ? rank_b - 1 : rank_b - 2;
  const int n_b = tb ? rank_b - 2 : rank_b - 1;
  const int rows = rank_out - 2;
  const int cols = rank_out - 1;
  ctx.NewBuilder().Split(kA, m_a).Broadcast(kB).Split({kOut, kAddTo}, rows).Build();
  ctx.NewBuilder().Broadcast(kA).Split(kB, n_b).Split({kOut, kAddTo}, cols).Build();
  ctx.NewBuilder().Split(kA, k_a).Split(kB, k_b).PartialSum({kOut, kAddTo}).Build();
  ctx.NewBuilder().PartialSum(kA).Broadcast(kB).PartialSum({kOut, kAddTo}).Build();
  ctx.NewBuilder().Broadcast(kA).PartialSum(kB).PartialSum({kOut, kAddTo}).Build();
}

// out = batch dims ++ [m, n]; checks k and dtypes; `batch` gives the batch
// dims (already validated by the caller).
absl::Status SetMatmulOutput(ShapeContext& ctx, const std::vector<int64_t>& batch) {
  const TensorDesc& a = ctx.input("a");
  const TensorDesc& b = ctx.input("b");
  absl::Status s = CheckSameDtype(a, "a_0", b, "b_0");
  if (!s.ok()) return s;
  const bool ta = ctx.Attr<bool>("transpose_a");
  const bool tb = ctx.Attr<bool>("transpose_b");
  const int ra = a.shape.rank();
  const int rb = b.shape.rank();
  const int64_t m = a.shape.dim(ta ? ra - 1 : ra - 2);
  const int64_t ka = a.shape.dim(ta ? ra - 2 : ra - 1);
  const int64_t kb = b.shape.dim(tb ? rb - 1 : rb - 2);
  const int64_t n = b.shape.dim(tb ? rb - 2 : rb - 1);
  if (ka != kb) {
    return absl::InvalidArgumentError(absl::StrCat(
        "contraction dims differ: a_0 ", a.ToString(), ta ? " (transposed)" : "",
        " has k=", ka, ", b_0 ", b.ToString(), tb ? " (transposed)" : "", " has k=", kb));
  }
  std::vector<int64_t> dims = batch;
  dims.push_back(m);
  dims.push_back(n);
  absl::StatusOr<Shape> out = MakeShape(dims, "out_0");
  if (!out.ok()) return out.status();
  const TensorDesc out_desc{*out, a.dtype};
  if (ctx.has_input("_add_to_output") && ctx.input("_add_to_output") != out_desc) {
    return absl::InvalidArgumentError(absl::StrCat(
        "_add_to_output_0 is ", ctx.input("_add_to_output").ToString(),
        " but out_0 is ", out_desc.ToString()));
  }
  ctx.set_output("out", 0, out_desc);
  return absl::OkStatus();
}

absl::Status MatmulShape(ShapeContext& ctx) {
  for (const char* arg : {"a", "b"}) {
    absl::Status s = CheckRank(ctx.input(arg), absl::StrCat(arg, "_0"), 2);
    if (!s.ok()) return s;
  }
  return SetMatmulOutput(ctx, {});
}

absl::Status MatmulGetSbp(SbpContext& ctx) {
  EmitMatrixCandidates(ctx, 2, 2, 2);
  return absl::OkStatus();
}

absl::Status BatchMatmulShape(ShapeContext& ctx) {
  const TensorDesc& a = ctx.input("a");
  const TensorDesc& b = ctx.input("b");
  absl::Status s = CheckRank(a, "a_0", 3, /*at_least=*/true);
  if (!s.ok()) return s;
  if (a.shape.rank() != b.shape.rank()) {
    return absl::InvalidArgumentError(absl::StrCat(
        "a_0 ", a.ToString(), " and b_0 ", b.ToString(),
        " must have the same rank (use broadcast_matmul otherwise)"));
  }
  std::vector<int64_t> batch;
  for (int i = 0; i + 2 < a.shape.rank(); ++i) {
    if (a.shape.dim(i) != b.shape.dim(i)) {
      return absl::InvalidArgumentError(absl::StrCat(
          "batch dim ", i, " differs: a_0 ", a.ToString(), ", b_0 ", b.ToString()));
    }
    batch.push_back(a.shape.dim(i));
  }
  return SetMatmulOutput(ctx, batch);
}

absl::Status BatchMatmulGetSbp(SbpContext& ctx) {
  const int r = ctx.input_desc("a").shape.rank();
  for (int i = 0; i + 2 < r; ++i) {
    ctx.NewBuilder().Split(kA, i).Split(kB, i).Split({kOut, kAddTo}, i).Build();
  }
  EmitMatrixCandidates(ctx, r, r, r);
  return absl::OkStatus();
}

// Batch dims right-aligned; a missing dim counts as 1.
struct BatchLayout {
  int rank_out;
  int pad_a;
  int pad_b;
};

BatchLayout LayoutOf(const Shape& a, const Shape& b) {
  const int batch = std::max(a.rank(), b.rank()) - 2;
  return BatchLayout{batch + 2, batch - (a.rank() - 2), batch - (b.rank() - 2)};
}

absl::Status BroadcastMatmulShape(ShapeContext& ctx) {
  const TensorDesc& a = ctx.input("a");
  const TensorDesc& b = ctx.input("b");
  for (const auto& [d, name] : {std::pair{&a, "a_0"}, std::pair{&b, "b_0"}}) {
    absl::Status s = CheckRank(*d, name, 2, /*at_least=*/true);
    if (!s.ok()) return s;
  }
  const BatchLayout l = LayoutOf(a.shape, b.shape);
  std::vector<int64_t> batch;
  for (int i = 0; i + 2 < l.rank_out; ++i) {
    const int64_t da = i >= l.pad_a ? a.shape.dim(i - l.pad_a) : 1;
    const int64_t db = i >= l.pad_b ? b.shape.dim(i - l.pad_b) : 1;
    if (da != db && da != 1 && db != 1) {
      return absl::InvalidArgumentError(absl::StrCat(
          "batch dims of a_0 ", a.ToString(), " and b_0 ", b.ToString(),
          " do not broadcast at output dim ", i, " (", da, " vs ", db, ")"));
    }
    batch.push_back(std::max(da, db));
  }
  return SetMatmulOutput(ctx, batch);
}

absl::Status BroadcastMatmulGetSbp(SbpContext& ctx) {
  const Shape& a = ctx.input_desc("a").shape;
  const Shape& b = ctx.input_desc("b").shape;
  const BatchLayout l = LayoutOf(a, b);
  for (int i = 0; i + 2 < l.rank_out; ++i) {
    const int64_t da = i >= l.pad_a ? a.dim(i - l.pad_a) : 1;
    const int64_t db = i >= l.pad_b ? b.dim(i - l.pad_b) : 1;
    if (da == db && da != 1) {
      ctx.NewBuilder().Split(kA, i - l.pad_a).Split(kB, i - l.pad_b)
          .Split({kOut, kAddTo}, i).Build();
    } else if (da == 1 && db != 1) {
      ctx.NewBuilder().Broadcast(kA).Split(kB, i - l.pad_b).Split({kOut, kAddTo}, i).Build();
    } else if (db == 1 && da != 1) {
      ctx.NewBuilder().Split(kA, i - l.pad_a).Broadcast(kB).Split({kOut, kAddTo}, i).Build();
    }
  }
  EmitMatrixCandidates(ctx, a.rank(), b.rank(), l.rank_out);
  return absl::OkStatus();
}

OpDefBuilder MatmulLike(const char* name, ShapeFn shape, GetSbpFn rule) {
  OpDefBuilder b(name);
  b.Input("a").Input("b").OptionalInput("_add_to_output").Output("out")
      .Attr("transpose_a", AttrValue(false))
      .Attr("transpose_b", AttrValue(false))
      .Attr("alpha", AttrValue(1.0))
      .SetShapeFn(std::move(shape))
      .SetGetSbpFn(std::move(rule));
  return b;
}

}  // namespace

// einsum(in...; equation) -> out: any contraction an einsum spec
// describes ("bmk,kn->bmn"), with the candidates of the einsum rule
// generator (einsum_rule.h): shared letters split alike, contracted
// letters split into P, each operand P alone. The spec is an attribute, so
// one op serves every equation (PyTorch's torch.einsum, OneFlow's
// flow.einsum); a malformed equation or operands that disagree with it
// are kInvalidArgument naming the equation.
OpDefBuilder Einsum() {
  OpDefBuilder b("einsum");
  b.VariadicInput("in").Output("out").RequiredAttr("equation", AttrType::kString);
  b.Doc("einsum(in...; equation) -> out: the contraction the equation names");
  auto spec_of = [](const std::string& equation) -> absl::StatusOr<EinsumSpec> {
    // The parser's messages name the equation; the op's name comes first
    // from the caller ("einsum: equation '...' needs exactly one '->'").
    return ParseEinsum(equation);
  };
  b.SetShapeFn([spec_of](ShapeContext& ctx) -> absl::Status {
    absl::StatusOr<EinsumSpec> spec = spec_of(ctx.Attr<std::string>("equation"));
    if (!spec.ok()) return spec.status();
    const int n = ctx.input_count("in");
    if (n != static_cast<int>(spec->inputs.size())) {
      return absl::InvalidArgumentError(absl::StrCat(
          "einsum: equation ", QuotedInput(ctx.Attr<std::string>("equation")), " has ",
          spec->inputs.size(),
          " operands; the call has ", n, " inputs"));
    }
    std::vector<TensorDesc> descs;
    for (int i = 0; i < n; ++i) descs.push_back(ctx.input("in", i));
    absl::StatusOr<TensorDesc> out = EinsumOutputDesc(*spec, descs);
    if (!out.ok()) {
      return absl::InvalidArgumentError(absl::StrCat(
          "einsum: equation ", QuotedInput(ctx.Attr<std::string>("equation")), ": ",
          out.status().message()));
    }
    ctx.set_output("out", 0, *out);
    return absl::OkStatus();
  });
  b.SetGetSbpFn([spec_of](SbpContext& ctx) -> absl::Status {
    absl::StatusOr<EinsumSpec> spec = spec_of(ctx.Attr<std::string>("equation"));
    if (!spec.ok()) return spec.status();
    return EinsumGetSbp(ctx, *spec);
  });
  return b;
}

absl::Status RegisterMatmulOps(OpRegistry* registry) {
  return RegisterAll(registry,
                     {MatmulLike("matmul", MatmulShape, MatmulGetSbp),
                      MatmulLike("batch_matmul", BatchMatmulShape, BatchMatmulGetSbp),
                      MatmulLike("broadcast_matmul", BroadcastMatmulShape,
                                 BroadcastMatmulGetSbp),
                      Einsum()});
}

}  // namespace oneflow_sbp::ops
