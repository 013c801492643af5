#include "graph/program_generators.h"

#include <cmath>
#include <random>
#include <utility>
#include <vector>

#include "absl/strings/str_cat.h"
#include "oneflow_sbp/values/status_macros.h"

namespace oneflow_sbp::graph {
namespace {

TensorDesc F32(std::vector<int64_t> dims) {
  return TensorDesc{*Shape::Make(dims), DataType::kFloat32};
}

// (S(0), B, B, ...) on the placement's mesh.
NdSbp DataParallel(const Placement& placement) {
  NdSbp nd = NdSbp::Repeat(SbpParallel::Broadcast(), placement.num_axes());
  nd.set(0, SbpParallel::Split(0));
  return nd;
}

AttrMap Attrs(std::vector<std::pair<std::string, AttrValue>> entries) {
  AttrMap m;
  for (auto& [name, value] : entries) m.Set(name, std::move(value));
  return m;
}

}  // namespace

absl::StatusOr<Program> GptProgram(const OpRegistry& registry, const Placement& placement,
                                   const GptConfig& c) {
  if (c.layers < 1 || c.heads < 1 || c.hidden % c.heads != 0) {
    return absl::InvalidArgumentError(absl::StrCat("gpt program: ", c.layers, " layers, hidden ",
                                                   c.hidden, " and ", c.heads,
                                                   " heads; need layers >= 1 and heads | hidden"));
  }
  ProgramBuilder b(registry, placement);
  NdSbp in_layout = DataParallel(placement);
  if (!c.input_nd_sbp.empty()) {
    OFS_ASSIGN_OR_RETURN(in_layout, NdSbp::Parse(c.input_nd_sbp));
  }
  OFS_RETURN_IF_ERROR(b.AddInput("x0", F32({c.batch, c.seq, c.hidden}), in_layout));
  const int64_t d = c.hidden / c.heads;
  const std::vector<int64_t> split_heads = {c.batch, c.seq, c.heads, d};
  const std::vector<int64_t> merged = {c.batch, c.seq, c.hidden};
  const std::vector<int64_t> swap = {0, 2, 1, 3};
  std::string x = "x0";
  for (int l = 0; l < c.layers; ++l) {
    auto n = [l](absl::string_view what) { return absl::StrCat("l", l, ".", what); };
    for (const char* w : {"g1", "g2"}) OFS_RETURN_IF_ERROR(b.AddParameter(n(w), F32({c.hidden})));
    for (const char* w : {"wq", "wk", "wv", "wo"}) {
      OFS_RETURN_IF_ERROR(b.AddParameter(n(w), F32({c.hidden, c.hidden})));
    }
    OFS_RETURN_IF_ERROR(b.AddParameter(n("w1"), F32({c.hidden, c.ffn})));
    OFS_RETURN_IF_ERROR(b.AddParameter(n("w2"), F32({c.ffn, c.hidden})));
    const AttrMap norm = Attrs({{"normalized_shape", AttrValue(std::vector<int64_t>{c.hidden})}});
    OFS_RETURN_IF_ERROR(b.AddOp("rms_norm", {x, n("g1")}, {n("n1")}, norm, n("norm1")));
    for (const char* h : {"q", "k", "v"}) {
      const std::string w = absl::StrCat("w", h);
      OFS_RETURN_IF_ERROR(
          b.AddOp("broadcast_matmul", {n("n1"), n(w)}, {n(h)}, AttrMap(), n(absl::StrCat(h, "_proj"))));
      OFS_RETURN_IF_ERROR(b.AddOp("reshape", {n(h)}, {n(absl::StrCat(h, "4"))},
                                  Attrs({{"shape", AttrValue(split_heads)}}),
                                  n(absl::StrCat(h, "_split_heads"))));
      OFS_RETURN_IF_ERROR(b.AddOp("transpose", {n(absl::StrCat(h, "4"))},
                                  {n(absl::StrCat(h, "h"))}, Attrs({{"perm", AttrValue(swap)}}),
                                  n(absl::StrCat(h, "_heads_first"))));
    }
    OFS_RETURN_IF_ERROR(b.AddOp("batch_matmul", {n("qh"), n("kh")}, {n("scores")},
                                Attrs({{"transpose_b", AttrValue(true)}}), n("qk")));
    OFS_RETURN_IF_ERROR(
        b.AddOp("scalar_mul", {n("scores")}, {n("scaled")},
                Attrs({{"has_float_operand", AttrValue(true)},
                       {"float_operand", AttrValue(1.0 / std::sqrt(static_cast<double>(d)))}}),
                n("scale")));
    OFS_RETURN_IF_ERROR(b.AddOp("softmax", {n("scaled")}, {n("probs")}, AttrMap(), n("softmax")));
    OFS_RETURN_IF_ERROR(
        b.AddOp("batch_matmul", {n("probs"), n("vh")}, {n("ctx")}, AttrMap(), n("pv")));
    OFS_RETURN_IF_ERROR(b.AddOp("transpose", {n("ctx")}, {n("ctx4")},
                                Attrs({{"perm", AttrValue(swap)}}), n("ctx_seq_first")));
    OFS_RETURN_IF_ERROR(b.AddOp("reshape", {n("ctx4")}, {n("ctx3")},
                                Attrs({{"shape", AttrValue(merged)}}), n("ctx_merge_heads")));
    OFS_RETURN_IF_ERROR(
        b.AddOp("broadcast_matmul", {n("ctx3"), n("wo")}, {n("attn")}, AttrMap(), n("o_proj")));
    OFS_RETURN_IF_ERROR(b.AddOp("add_n", {x, n("attn")}, {n("h")}, AttrMap(), n("residual1")));
    OFS_RETURN_IF_ERROR(b.AddOp("rms_norm", {n("h"), n("g2")}, {n("n2")}, norm, n("norm2")));
    OFS_RETURN_IF_ERROR(
        b.AddOp("broadcast_matmul", {n("n2"), n("w1")}, {n("up")}, AttrMap(), n("mlp_up")));
    OFS_RETURN_IF_ERROR(b.AddOp("gelu", {n("up")}, {n("act")}, AttrMap(), n("gelu")));
    OFS_RETURN_IF_ERROR(
        b.AddOp("broadcast_matmul", {n("act"), n("w2")}, {n("down")}, AttrMap(), n("mlp_down")));
    OFS_RETURN_IF_ERROR(b.AddOp("add_n", {n("h"), n("down")}, {n("out")}, AttrMap(), n("residual2")));
    x = n("out");
  }
  OFS_RETURN_IF_ERROR(b.MarkOutput(x, std::nullopt));
  return std::move(b).Build();
}

absl::StatusOr<Program> MlpProgram(const OpRegistry& registry, const Placement& placement,
                                   const MlpConfig& c) {
  ProgramBuilder b(registry, placement);
  OFS_ASSIGN_OR_RETURN(NdSbp x_layout, NdSbp::Parse(c.x_nd_sbp));
  OFS_RETURN_IF_ERROR(b.AddInput("x", F32({c.batch, c.hidden}), x_layout));
  OFS_RETURN_IF_ERROR(b.AddParameter("w1", F32({c.hidden, c.ffn})));
  OFS_RETURN_IF_ERROR(b.AddParameter("w2", F32({c.ffn, c.hidden})));
  OFS_RETURN_IF_ERROR(b.AddOp("matmul", {"x", "w1"}, {"h"}, AttrMap(), "fc1"));
  OFS_RETURN_IF_ERROR(b.AddOp("gelu", {"h"}, {"a"}, AttrMap(), "gelu"));
  OFS_RETURN_IF_ERROR(b.AddOp("matmul", {"a", "w2"}, {"y"}, AttrMap(), "fc2"));
  std::optional<NdSbp> y_layout;
  if (!c.y_nd_sbp.empty()) {
    OFS_ASSIGN_OR_RETURN(y_layout, NdSbp::Parse(c.y_nd_sbp));
  }
  OFS_RETURN_IF_ERROR(b.MarkOutput("y", y_layout));
  return std::move(b).Build();
}

absl::StatusOr<Program> RandomProgram(const OpRegistry& registry, const Placement& placement,
                                      uint64_t seed, int num_ops) {
  std::mt19937_64 rng(seed);
  ProgramBuilder b(registry, placement);
  OFS_RETURN_IF_ERROR(b.AddInput("x", F32({16, 16}), DataParallel(placement)));
  std::vector<std::string> tensors = {"x"};
  // One of the last few tensors: recent ones make chains, older ones make
  // diamonds and residual joins.
  auto pick = [&]() -> const std::string& {
    const size_t window = std::min<size_t>(tensors.size(), 4);
    return tensors[tensors.size() - 1 - rng() % window];
  };
  static const char* const kUnary[] = {"relu", "gelu", "tanh", "softmax"};
  int weights = 0;
  for (int i = 0; i < num_ops; ++i) {
    const std::string out = absl::StrCat("t", i);
    const uint64_t kind = rng() % 10;
    if (kind < 4) {
      OFS_RETURN_IF_ERROR(b.AddOp(kUnary[rng() % 4], {pick()}, {out}, AttrMap()));
    } else if (kind < 6) {
      // Sums of two or three recent tensors: three make dense local
      // structure (an op reading A, B and C where B read A and C read both
      // is a K4, which no chain or leaf rule removes).
      std::vector<std::string> in = {pick()};
      in.push_back(pick());
      if (rng() % 2) in.push_back(pick());
      OFS_RETURN_IF_ERROR(b.AddOp("add_n", in, {out}, AttrMap()));
    } else if (kind < 9) {
      // A new weight, or (one time in three) one an earlier matmul read:
      // a shared parameter ties distant ops together.
      std::string w;
      if (weights > 0 && rng() % 3 == 0) {
        w = absl::StrCat("w", rng() % weights);
      } else {
        w = absl::StrCat("w", weights++);
        OFS_RETURN_IF_ERROR(b.AddParameter(w, F32({16, 16})));
      }
      OFS_RETURN_IF_ERROR(b.AddOp("matmul", {pick(), w}, {out}, AttrMap()));
    } else {
      const std::string a = pick();
      OFS_RETURN_IF_ERROR(b.AddOp("matmul", {a, pick()}, {out}, AttrMap()));
    }
    tensors.push_back(out);
  }
  return std::move(b).Build();
}

}  // namespace oneflow_sbp::graph
