#include "models/llama_block.h"

#include <cmath>

#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "eager/apply.h"
#include "eager/autograd.h"
#include "eager/tensor_layout.h"
#include "checkpoint/checkpoint.h"
#include "oneflow_sbp/values/seeded_stream.h"
#include "oneflow_sbp/values/status_macros.h"

namespace oneflow_sbp::models {
namespace {

using eager::Apply;
using eager::Apply1;
using eager::Attrs;
using eager::EagerContext;
using eager::GlobalTensor;

using Stream = SeededStream;

NdSbp All(int axes, SbpParallel s) {
  NdSbp nd;
  for (int i = 0; i < axes; ++i) nd.push_back(s);
  return nd;
}

std::vector<int64_t> Dims(std::initializer_list<int64_t> d) { return std::vector<int64_t>(d); }

}  // namespace

absl::Status ValidateConfig(const LlamaConfig& c, const Placement& placement) {
  for (const auto& [name, v] : {std::pair<const char*, int64_t>{"batch", c.batch},
                                {"seq", c.seq}, {"hidden", c.hidden}, {"heads", c.heads},
                                {"ffn", c.ffn}, {"vocab", c.vocab}, {"layers", c.layers}}) {
    if (v < 1) return absl::InvalidArgumentError(absl::StrCat("--", name, "=", v, " must be >= 1"));
  }
  if (c.hidden % c.heads != 0 || (c.hidden / c.heads) % 2 != 0) {
    return absl::InvalidArgumentError(absl::StrCat(
        "--hidden=", c.hidden, " must divide into --heads=", c.heads,
        " heads of an even size (rotary embedding rotates pairs)"));
  }
  const absl::Span<const int64_t> h = placement.hierarchy();
  const int64_t data = h[0];
  const int64_t model = h.size() > 1 ? h[1] : 1;
  if (c.batch % data != 0 || c.heads % model != 0 || c.ffn % model != 0 ||
      c.vocab % model != 0 || c.hidden % model != 0) {
    return absl::InvalidArgumentError(absl::StrCat(
        "on ", placement.ToString(), " --batch must divide by ", data, " and --heads, --hidden, "
        "--ffn and the vocabulary by ", model, " (data parallel on mesh axis 0, tensor parallel "
        "on axis 1)"));
  }
  return absl::OkStatus();
}

Marking MegatronMarking(const Placement& placement) {
  const int axes = placement.num_axes();
  Marking m;
  m.replicated = All(axes, SbpParallel::Broadcast());
  m.data = m.replicated;
  m.data.set(0, SbpParallel::Split(0));
  m.column = m.replicated;
  m.row = m.replicated;
  m.vocab_rows = m.replicated;
  if (axes > 1) {
    m.column.set(1, SbpParallel::Split(1));
    m.row.set(1, SbpParallel::Split(0));
    m.vocab_rows.set(1, SbpParallel::Split(0));
  }
  if (placement.parallel_num() == 1) m.data = m.replicated;
  return m;
}

absl::StatusOr<GlobalTensor> LlamaModel::Param(EagerContext& ctx, const std::string& name,
                                               std::vector<int64_t> dims, const NdSbp& nd,
                                               double scale, double offset) {
  OFS_ASSIGN_OR_RETURN(LocalTensor full, LocalTensor::Empty(DataType::kFloat32, dims));
  Stream stream(seed_, name);
  for (int64_t i = 0; i < full.elem_cnt(); ++i) full.SetDouble(i, offset + scale * stream.Next());
  OFS_ASSIGN_OR_RETURN(GlobalTensor t, eager::FromFull(ctx, full, placement_, nd));
  t.set_requires_grad(true);
  params_.emplace_back(name, t);
  return t;
}

const GlobalTensor& LlamaModel::P(const std::string& name) const {
  for (const auto& [n, t] : params_) {
    if (n == name) return t;
  }
  static const GlobalTensor* none = new GlobalTensor();
  return *none;
}

absl::StatusOr<LlamaModel> LlamaModel::Create(EagerContext& ctx, const LlamaConfig& cfg,
                                              const Placement& placement, uint64_t seed) {
  OFS_RETURN_IF_ERROR(ValidateConfig(cfg, placement));
  LlamaModel m;
  m.cfg_ = cfg;
  m.placement_ = placement;
  m.marking_ = MegatronMarking(placement);
  m.seed_ = seed;
  const Marking& mk = m.marking_;
  const double h = static_cast<double>(cfg.hidden);
  const double f = static_cast<double>(cfg.ffn);
  OFS_RETURN_IF_ERROR(m.Param(ctx, "embedding", Dims({cfg.vocab, cfg.hidden}), mk.vocab_rows, 1.0, 0).status());
  for (int l = 0; l < cfg.layers; ++l) {
    const std::string p = absl::StrCat("layer", l, ".");
    const double in = 1 / std::sqrt(h);
    OFS_RETURN_IF_ERROR(m.Param(ctx, p + "attn_norm", Dims({cfg.hidden}), mk.replicated, 0.1, 1).status());
    for (const char* w : {"wq", "wk", "wv"}) {
      OFS_RETURN_IF_ERROR(m.Param(ctx, p + w, Dims({cfg.hidden, cfg.hidden}), mk.column, in, 0).status());
    }
    OFS_RETURN_IF_ERROR(m.Param(ctx, p + "wo", Dims({cfg.hidden, cfg.hidden}), mk.row, in, 0).status());
    OFS_RETURN_IF_ERROR(m.Param(ctx, p + "mlp_norm", Dims({cfg.hidden}), mk.replicated, 0.1, 1).status());
    OFS_RETURN_IF_ERROR(m.Param(ctx, p + "w_gate", Dims({cfg.hidden, cfg.ffn}), mk.column, in, 0).status());
    OFS_RETURN_IF_ERROR(m.Param(ctx, p + "w_up", Dims({cfg.hidden, cfg.ffn}), mk.column, in, 0).status());
    OFS_RETURN_IF_ERROR(m.Param(ctx, p + "w_down", Dims({cfg.ffn, cfg.hidden}), mk.row, 1 / std::sqrt(f), 0).status());
  }
  OFS_RETURN_IF_ERROR(m.Param(ctx, "final_norm", Dims({cfg.hidden}), mk.replicated, 0.1, 1).status());
  OFS_RETURN_IF_ERROR(m.Param(ctx, "lm_head", Dims({cfg.hidden, cfg.vocab}), mk.column, 1 / std::sqrt(h), 0).status());
  return m;
}

absl::Status LlamaModel::SetBatch(EagerContext& ctx, uint64_t seed) {
  const LlamaConfig& c = cfg_;
  Stream stream(seed, "batch");
  OFS_ASSIGN_OR_RETURN(LocalTensor ids, LocalTensor::Empty(DataType::kInt64, Dims({c.batch, c.seq})));
  OFS_ASSIGN_OR_RETURN(LocalTensor labels,
                       LocalTensor::Empty(DataType::kInt64, Dims({c.batch * c.seq})));
  for (int64_t i = 0; i < ids.elem_cnt(); ++i) {
    ids.data<int64_t>()[i] = static_cast<int64_t>(stream.NextInt(c.vocab));
  }
  // Next-token labels, with a random last token per sequence.
  for (int64_t b = 0; b < c.batch; ++b) {
    for (int64_t s = 0; s < c.seq; ++s) {
      labels.data<int64_t>()[b * c.seq + s] =
          s + 1 < c.seq ? ids.data<int64_t>()[b * c.seq + s + 1]
                        : static_cast<int64_t>(stream.NextInt(c.vocab));
    }
  }
  const int64_t hd = c.hidden / c.heads;
  OFS_ASSIGN_OR_RETURN(LocalTensor cos, LocalTensor::Empty(DataType::kFloat32, Dims({c.seq, hd})));
  OFS_ASSIGN_OR_RETURN(LocalTensor sin, LocalTensor::Empty(DataType::kFloat32, Dims({c.seq, hd})));
  for (int64_t p = 0; p < c.seq; ++p) {
    for (int64_t i = 0; i < hd / 2; ++i) {
      const double theta = static_cast<double>(p) *
                           std::pow(10000.0, -2.0 * static_cast<double>(i) / static_cast<double>(hd));
      for (int64_t j : {i, i + hd / 2}) {
        cos.SetDouble(p * hd + j, std::cos(theta));
        sin.SetDouble(p * hd + j, std::sin(theta));
      }
    }
  }
  OFS_ASSIGN_OR_RETURN(ids_, eager::FromFull(ctx, ids, placement_, marking_.data));
  OFS_ASSIGN_OR_RETURN(labels_, eager::FromFull(ctx, labels, placement_, marking_.data));
  OFS_ASSIGN_OR_RETURN(cos_, eager::FromFull(ctx, cos, placement_, marking_.replicated));
  OFS_ASSIGN_OR_RETURN(sin_, eager::FromFull(ctx, sin, placement_, marking_.replicated));
  return absl::OkStatus();
}

absl::StatusOr<GlobalTensor> LlamaModel::Layer(EagerContext& ctx, int layer, GlobalTensor h) {
  const LlamaConfig& c = cfg_;
  const std::string p = absl::StrCat("layer", layer, ".");
  const int64_t hd = c.hidden / c.heads;
  const AttrMap norm = Attrs({{"normalized_shape", AttrValue(Dims({c.hidden}))}});
  const AttrMap heads = Attrs({{"shape", AttrValue(Dims({c.batch, c.seq, c.heads, hd}))}});
  const AttrMap merge = Attrs({{"shape", AttrValue(Dims({c.batch, c.seq, c.hidden}))}});
  const AttrMap swap = Attrs({{"perm", AttrValue(Dims({0, 2, 1, 3}))}});
  OFS_ASSIGN_OR_RETURN(std::vector<GlobalTensor> n1, Apply(ctx, "rms_norm", {h, P(p + "attn_norm")}, norm));
  std::vector<GlobalTensor> qkv;
  for (const char* w : {"wq", "wk", "wv"}) {
    OFS_ASSIGN_OR_RETURN(GlobalTensor t, Apply1(ctx, "broadcast_matmul", {n1[0], P(p + w)}));
    OFS_ASSIGN_OR_RETURN(t, Apply1(ctx, "reshape", {t}, heads));
    OFS_ASSIGN_OR_RETURN(t, Apply1(ctx, "transpose", {t}, swap));
    qkv.push_back(t);
  }
  for (int i : {0, 1}) {
    OFS_ASSIGN_OR_RETURN(qkv[i], Apply1(ctx, "rotary_embedding", {qkv[i], cos_, sin_}));
  }
  OFS_ASSIGN_OR_RETURN(GlobalTensor a, Apply1(ctx, "scaled_dot_product_attention", qkv,
                                              Attrs({{"causal", AttrValue(true)}})));
  OFS_ASSIGN_OR_RETURN(a, Apply1(ctx, "transpose", {a}, swap));
  OFS_ASSIGN_OR_RETURN(a, Apply1(ctx, "reshape", {a}, merge));
  OFS_ASSIGN_OR_RETURN(GlobalTensor o, Apply1(ctx, "broadcast_matmul", {a, P(p + "wo")}));
  OFS_ASSIGN_OR_RETURN(h, Apply1(ctx, "add_n", {h, o}));
  OFS_ASSIGN_OR_RETURN(std::vector<GlobalTensor> n2, Apply(ctx, "rms_norm", {h, P(p + "mlp_norm")}, norm));
  OFS_ASSIGN_OR_RETURN(GlobalTensor g, Apply1(ctx, "broadcast_matmul", {n2[0], P(p + "w_gate")}));
  OFS_ASSIGN_OR_RETURN(GlobalTensor u, Apply1(ctx, "broadcast_matmul", {n2[0], P(p + "w_up")}));
  OFS_ASSIGN_OR_RETURN(g, Apply1(ctx, "silu", {g}));
  OFS_ASSIGN_OR_RETURN(GlobalTensor m, Apply1(ctx, "broadcast_mul", {g, u}));
  OFS_ASSIGN_OR_RETURN(GlobalTensor d, Apply1(ctx, "broadcast_matmul", {m, P(p + "w_down")}));
  return Apply1(ctx, "add_n", {h, d});
}

absl::StatusOr<GlobalTensor> LlamaModel::Loss(EagerContext& ctx) {
  const LlamaConfig& c = cfg_;
  OFS_ASSIGN_OR_RETURN(GlobalTensor h, Apply1(ctx, "embedding", {P("embedding"), ids_}));
  for (int l = 0; l < c.layers; ++l) {
    OFS_ASSIGN_OR_RETURN(h, Layer(ctx, l, h));
  }
  OFS_ASSIGN_OR_RETURN(std::vector<GlobalTensor> n,
                       Apply(ctx, "rms_norm", {h, P("final_norm")},
                             Attrs({{"normalized_shape", AttrValue(Dims({c.hidden}))}})));
  OFS_ASSIGN_OR_RETURN(GlobalTensor logits, Apply1(ctx, "broadcast_matmul", {n[0], P("lm_head")}));
  OFS_ASSIGN_OR_RETURN(logits, Apply1(ctx, "reshape", {logits},
                                      Attrs({{"shape", AttrValue(Dims({c.batch * c.seq, c.vocab}))}})));
  OFS_ASSIGN_OR_RETURN(std::vector<GlobalTensor> ce,
                       Apply(ctx, "sparse_softmax_cross_entropy_ms", {logits, labels_},
                             Attrs({{"depth", AttrValue(c.vocab)}})));
  return Apply1(ctx, "reduce_mean", {ce[1]}, Attrs({{"axis", AttrValue(Dims({0}))}}));
}

absl::Status LlamaModel::Save(EagerContext& ctx, const std::string& dir, int steps_done) const {
  std::vector<checkpoint::NamedTensor> tensors;
  for (size_t i = 0; i < params_.size(); ++i) {
    const auto& [name, p] = params_[i];
    tensors.push_back({name, eager::Detach(p)});
    // Parameters that never had a gradient have no Adam state yet.
    if (i < adam_state_.size() && adam_state_[i].first.defined()) {
      tensors.push_back({"adam.m." + name, adam_state_[i].first});
      tensors.push_back({"adam.v." + name, adam_state_[i].second});
    }
  }
  // The demo draws nothing at random while it trains (the batch and the
  // weights come from the seed), so the seed is all the RNG state there is.
  return checkpoint::SaveCheckpoint(ctx, dir, tensors,
                            {{"step", absl::StrCat(steps_done)},
                             {"seed", absl::StrCat(seed_)},
                             {"model", "llama_block"}});
}

absl::StatusOr<int> LlamaModel::Restore(EagerContext& ctx, const std::string& dir) {
  OFS_ASSIGN_OR_RETURN(const checkpoint::CheckpointIndex index, checkpoint::ReadCheckpointIndex(dir));
  int steps = 0;
  uint64_t seed = 0;
  auto step_it = index.metadata.find("step");
  auto seed_it = index.metadata.find("seed");
  if (step_it == index.metadata.end() || !absl::SimpleAtoi(step_it->second, &steps) ||
      seed_it == index.metadata.end() || !absl::SimpleAtoi(seed_it->second, &seed)) {
    return absl::InvalidArgumentError(
        absl::StrCat(dir, ": not a demo checkpoint (no step or seed in its metadata)"));
  }
  if (seed != seed_) {
    return absl::InvalidArgumentError(absl::StrCat(
        dir, ": saved with --seed=", seed, " (its batch comes from the seed); resume with it"));
  }
  std::vector<checkpoint::CheckpointTarget> targets;
  std::vector<int> adam_of;  // param index of each Adam target pair
  for (size_t i = 0; i < params_.size(); ++i) {
    const auto& [name, p] = params_[i];
    targets.push_back({name, placement_, p.nd_sbp(), p.desc()});
  }
  for (size_t i = 0; i < params_.size(); ++i) {
    const auto& [name, p] = params_[i];
    if (index.Find("adam.m." + name) == nullptr) continue;
    targets.push_back({"adam.m." + name, placement_, p.nd_sbp(), p.desc()});
    targets.push_back({"adam.v." + name, placement_, p.nd_sbp(), p.desc()});
    adam_of.push_back(static_cast<int>(i));
  }
  OFS_ASSIGN_OR_RETURN(std::vector<GlobalTensor> loaded, checkpoint::LoadCheckpoint(ctx, dir, targets));
  // All loaded: only now replace anything.
  for (size_t i = 0; i < params_.size(); ++i) {
    params_[i].second = loaded[i];
    params_[i].second.set_requires_grad(true);
  }
  adam_state_.assign(params_.size(), {});
  for (size_t k = 0; k < adam_of.size(); ++k) {
    adam_state_[adam_of[k]] = {loaded[params_.size() + 2 * k], loaded[params_.size() + 2 * k + 1]};
  }
  return steps;
}

void LlamaModel::NameTensors(eager::ProgramRecorder& recorder) const {
  for (const auto& [name, t] : params_) recorder.Name(t, name);
  recorder.Name(ids_, "ids");
  recorder.Name(labels_, "labels");
  recorder.Name(cos_, "rotary_cos");
  recorder.Name(sin_, "rotary_sin");
}

absl::Status LlamaModel::AdamStep(EagerContext& ctx, int step) {
  const bool grad = ctx.grad_enabled();
  ctx.set_grad_enabled(false);
  absl::Status s;
  const double beta1 = 0.9;
  const double beta2 = 0.999;
  for (size_t i = 0; i < params_.size() && s.ok(); ++i) {
    GlobalTensor& p = params_[i].second;
    const GlobalTensor g = p.grad();
    if (!g.defined()) continue;
    if (adam_state_.size() <= i) adam_state_.resize(params_.size());
    auto& [m, v] = adam_state_[i];
    if (!m.defined()) {
      absl::StatusOr<GlobalTensor> zm = Apply1(ctx, "zeros_like", {eager::Detach(p)});
      absl::StatusOr<GlobalTensor> zv = Apply1(ctx, "zeros_like", {eager::Detach(p)});
      if (!zm.ok() || !zv.ok()) {
        s = zm.ok() ? zv.status() : zm.status();
        break;
      }
      m = *zm;
      v = *zv;
    }
    absl::StatusOr<std::vector<GlobalTensor>> r = Apply(
        ctx, "adam_update", {eager::Detach(p), g, m, v},
        Attrs({{"learning_rate", AttrValue(cfg_.learning_rate)},
               {"beta1", AttrValue(beta1)},
               {"beta2", AttrValue(beta2)},
               {"bias_correction1", AttrValue(1 - std::pow(beta1, step))},
               {"bias_correction2", AttrValue(1 - std::pow(beta2, step))}}));
    s = r.status();
    p.autograd().grad = GlobalTensor();
  }
  ctx.set_grad_enabled(grad);
  return s;
}

}  // namespace oneflow_sbp::models