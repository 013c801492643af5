// The matmul family (SPEC.md §6): matmul (2-D x 2-D), batch_matmul (equal
// ranks >= 3, equal batch dims) and broadcast_matmul (batch dims broadcast
// NumPy-style). All three take their candidates from the einsum rule
// generator (einsum_rule.h), each call's spec built from its ranks and
// transpose flags (batch_matmul with transpose_b is like "bmk,bnk->bmn") —
// OneFlow writes the list out three times — and the optional
// `_add_to_output` input always takes `out`'s SBP.
//
// Matrix candidates, after the batch dims' splits, with m/k axes of a and
// k/n axes of b taken from each operand's own rank and transpose flags:
//   1) a:S(m) b:B    -> out:S(rows)    row-parallel
//   2) a:B    b:S(n) -> out:S(cols)    column-parallel
//   3) a:S(k) b:S(k) -> out:P          contraction split
//   4) a:P    b:B    -> out:P          linear in a
//   5) a:B    b:P    -> out:P          linear in b
#include "ops/matmul_ops.h"

#include <algorithm>
#include <string>
#include <utility>
#include <vector>

#include "absl/strings/str_cat.h"
#include "oneflow_sbp/values/check.h"
#include "oneflow_sbp/values/quoted_input.h"
#include "oneflow_sbp/rule_api/sbp_context.h"
#include "oneflow_sbp/values/status_macros.h"
#include "ops/einsum_rule.h"
#include "ops/op_util.h"

namespace oneflow_sbp::ops {
namespace {

const OpArg kA{"a", 0};
const OpArg kB{"b", 0};
const OpArg kOut{"out", 0};
const OpArg kAddTo{"_add_to_output", 0};

// Letters for the einsum specs below: m, k and n for the matrix part, the
// rest of the 127 non-zero chars for batch dims and for the unit batch dims
// that broadcast (these specs are built here, never parsed, so any char
// serves). Shape::kMaxRank bounds what is needed: 30 batch letters and at
// most 30 fresh ones.
class LetterPool {
 public:
  char Next() {
    while (next_ == 'm' || next_ == 'k' || next_ == 'n') ++next_;
    OFS_CHECK(next_ < 127) << "more einsum letters than Shape::kMaxRank allows";
    return static_cast<char>(next_++);
  }

 private:
  int next_ = 1;
};

// The matrix part of one operand's letters: "mk"/"km" for a, "kn"/"nk" for b.
std::string MatrixLetters(bool is_a, bool transposed) {
  if (is_a) return transposed ? "km" : "mk";
  return transposed ? "nk" : "kn";
}

// The family's candidates from the einsum generator (einsum_rule.h): batch
// letters (in output order), then row-parallel (S(m)), column-parallel
// (S(n)), the contraction split (S(k) -> P), then a P and b P, exactly
// OneFlow's order. `_add_to_output` takes out's SBP. m, k and n offer their
// split at any extent, as OneFlow's lists do, and so do the batch letters in
// `unit_batch_letters` (batch_matmul's all; broadcast_matmul's none: it
// splits a batch dim only where some operand's extent is not 1).
absl::Status MatmulFamilyGetSbp(SbpContext& ctx, EinsumSpec spec,
                                const std::string& unit_batch_letters) {
  const bool ta = ctx.Attr<bool>("transpose_a");
  const bool tb = ctx.Attr<bool>("transpose_b");
  spec.inputs[0] += MatrixLetters(/*is_a=*/true, ta);
  spec.inputs[1] += MatrixLetters(/*is_a=*/false, tb);
  spec.output += "mn";
  EinsumBinding binding;
  binding.operands = {kA, kB};
  binding.follow_output = {kAddTo};
  binding.keep_unit_letters = unit_batch_letters + "mkn";
  return EinsumGetSbp(ctx, spec, binding);
}

// out = batch dims ++ [m, n]; checks k and dtypes; `batch` gives the batch
// dims (already validated by the caller).
absl::Status SetMatmulOutput(ShapeContext& ctx, const std::vector<int64_t>& batch) {
  const TensorDesc& a = ctx.input("a");
  const TensorDesc& b = ctx.input("b");
  absl::Status s = CheckSameDtype(a, "a_0", b, "b_0");
  OFS_RETURN_IF_ERROR(s);
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
  OFS_ASSIGN_OR_RETURN(Shape out, MakeShape(dims, "out_0"));
  const TensorDesc out_desc{out, a.dtype};
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
    OFS_RETURN_IF_ERROR(s);
  }
  return SetMatmulOutput(ctx, {});
}

absl::Status MatmulGetSbp(SbpContext& ctx) {
  return MatmulFamilyGetSbp(ctx, EinsumSpec{{"", ""}, ""}, /*unit_batch_letters=*/"");
}

absl::Status BatchMatmulShape(ShapeContext& ctx) {
  const TensorDesc& a = ctx.input("a");
  const TensorDesc& b = ctx.input("b");
  absl::Status s = CheckRank(a, "a_0", 3, /*at_least=*/true);
  OFS_RETURN_IF_ERROR(s);
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

// Every batch dim splits all three alike, at any extent (OneFlow's list).
absl::Status BatchMatmulGetSbp(SbpContext& ctx) {
  const int r = ctx.input_desc("a").shape.rank();
  LetterPool pool;
  std::string batch;
  for (int i = 0; i + 2 < r; ++i) batch += pool.Next();
  return MatmulFamilyGetSbp(ctx, EinsumSpec{{batch, batch}, batch}, /*unit_batch_letters=*/batch);
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
    OFS_RETURN_IF_ERROR(s);
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

// An operand carries an output batch dim's letter where its extent is the
// output's; a unit dim that broadcasts (or a missing one) does not, so that
// operand stays B when the others split there. A dim that is 1 everywhere
// offers nothing (the generator skips unit letters here).
absl::Status BroadcastMatmulGetSbp(SbpContext& ctx) {
  const Shape& a = ctx.input_desc("a").shape;
  const Shape& b = ctx.input_desc("b").shape;
  const BatchLayout l = LayoutOf(a, b);
  LetterPool pool;
  EinsumSpec spec{{"", ""}, ""};
  std::vector<char> out_letters;
  for (int i = 0; i + 2 < l.rank_out; ++i) out_letters.push_back(pool.Next());
  const struct {
    const Shape& shape;
    int pad;
  } operands[] = {{a, l.pad_a}, {b, l.pad_b}};
  for (int k = 0; k < 2; ++k) {
    const Shape& s = operands[k].shape;
    for (int j = 0; j + 2 < s.rank(); ++j) {
      const int i = j + operands[k].pad;
      const int64_t other_j = i - operands[1 - k].pad;
      const Shape& other = operands[1 - k].shape;
      const int64_t other_extent = other_j >= 0 ? other.dim(static_cast<int>(other_j)) : 1;
      const bool carries = s.dim(j) == std::max(s.dim(j), other_extent);
      spec.inputs[k] += carries ? out_letters[i] : pool.Next();
    }
  }
  spec.output.assign(out_letters.begin(), out_letters.end());
  return MatmulFamilyGetSbp(ctx, std::move(spec), /*unit_batch_letters=*/"");
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
    OFS_ASSIGN_OR_RETURN(EinsumSpec spec, spec_of(ctx.Attr<std::string>("equation")));
    const int n = ctx.input_count("in");
    if (n != static_cast<int>(spec.inputs.size())) {
      return absl::InvalidArgumentError(absl::StrCat(
          "einsum: equation ", QuotedInput(ctx.Attr<std::string>("equation")), " has ",
          spec.inputs.size(),
          " operands; the call has ", n, " inputs"));
    }
    std::vector<TensorDesc> descs;
    for (int i = 0; i < n; ++i) descs.push_back(ctx.input("in", i));
    absl::StatusOr<TensorDesc> out = EinsumOutputDesc(spec, descs);
    if (!out.ok()) {
      return absl::InvalidArgumentError(absl::StrCat(
          "einsum: equation ", QuotedInput(ctx.Attr<std::string>("equation")), ": ",
          out.status().message()));
    }
    ctx.set_output("out", 0, *out);
    return absl::OkStatus();
  });
  b.SetGetSbpFn([spec_of](SbpContext& ctx) -> absl::Status {
    OFS_ASSIGN_OR_RETURN(EinsumSpec spec, spec_of(ctx.Attr<std::string>("equation")));
    return EinsumGetSbp(ctx, spec);
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
