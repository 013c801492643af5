// Fuzz target: Engine::Infer on random ops of the builtin registry with
// random attributes, input counts, shapes, dtypes, meshes of up to 4 axes,
// producer layouts and constraints, under both built-in cost policies.
//
// Properties: errors are never kInternal; a result has one layout per
// blob, each valid for its placement, with output slices that tile the
// output; Infer is deterministic (a cold cache, a warm one and a fresh
// engine agree).
#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/strings/str_cat.h"
#include "fuzz/fuzz_check.h"
#include "fuzz/fuzz_gen.h"
#include "fuzz/fuzz_input.h"
#include "oneflow_sbp/values/attr_value.h"
#include "engine/engine.h"
#include "oneflow_sbp/inference/infer_types.h"
#include "oneflow_sbp/rule_api/op_call.h"
#include "oneflow_sbp/rule_api/sbp_signature.h"
#include "ops/builtin_ops.h"

namespace oneflow_sbp::fuzz {
namespace {

std::unique_ptr<engine::Engine> NewEngine() {
  engine::Engine::Options options;
  options.registry = engine::Engine::Options::Borrow(ops::BuiltinOpRegistry());
  absl::StatusOr<std::unique_ptr<engine::Engine>> e = engine::Engine::Create(std::move(options));
  FUZZ_CHECK(e.ok(), e.status().ToString());
  return *std::move(e);
}

engine::Engine& TheEngine() {
  static engine::Engine* engine = NewEngine().release();
  return *engine;
}

AttrValue GenAttr(FuzzInput& in, AttrType type) {
  switch (type) {
    case AttrType::kInt:
      return AttrValue(in.Range(-3, 8));
    case AttrType::kFloat: {
      static const double kFloats[] = {0.0, 1.0, -1.0, 0.5, 1e-5, 1e30};
      return AttrValue(kFloats[in.Range(0, 5)]);
    }
    case AttrType::kBool:
      return AttrValue(in.Bool());
    case AttrType::kString: {
      static const char* const kStrings[] = {"", "sum", "mean", "none", "max", "x", "ij,jk->ik"};
      return AttrValue(kStrings[in.Range(0, 6)]);
    }
    case AttrType::kInts: {
      std::vector<int64_t> v(in.Range(0, 4));
      for (int64_t& x : v) x = in.Range(-2, 6);
      return AttrValue(std::move(v));
    }
  }
  return AttrValue();
}

std::string ResultString(const OpCall& call, const InferResult& r) {
  std::string s = SignatureToString(call, r.signature);
  for (const TensorDesc& d : r.output_descs) absl::StrAppend(&s, " ", d.ToString());
  absl::StrAppend(&s, r.used_broadcast_fallback ? " fallback" : "", " n=", r.num_candidates);
  return s;
}

void FuzzOne(FuzzInput& in) {
  const OpRegistry& registry = ops::BuiltinOpRegistry();
  static const std::vector<std::string> names = registry.OpNames();
  const std::shared_ptr<const OpDef> def =
      registry.Find(names[in.Range(0, static_cast<int64_t>(names.size()) - 1)]);
  std::vector<int> counts;
  for (const ArgDef& arg : def->inputs()) {
    int c = 1;
    if (arg.variadic) c = static_cast<int>(in.Range(1, 4));
    if (arg.optional && in.Bool()) c = 0;
    counts.push_back(c);
  }
  AttrMap attrs;
  for (const AttrDef& a : def->attrs()) {
    if (!a.default_value || in.Range(0, 2) == 0) attrs.Set(a.name, GenAttr(in, a.type));
  }
  absl::StatusOr<std::shared_ptr<const OpCall>> call = OpCall::Make(def, counts, attrs);
  CheckNotInternal(call.status(), def->type_name());
  if (!call.ok()) return;

  InferRequest req;
  req.op = *call;
  req.placement = GenPlacement(in, 4, 3, 16);
  // Inputs mostly share one shape and dtype, so elementwise and binary ops
  // get past their shape checks.
  const Shape common = GenShape(in, 3, 6);
  const DataType dtype = GenDataType(in);
  for (int i = 0; i < (*call)->num_inputs(); ++i) {
    TensorDesc desc{in.Range(0, 3) == 0 ? GenShape(in, 3, 6) : common,
                    in.Range(0, 7) == 0 ? GenDataType(in) : dtype};
    const NdSbp nd = GenNdSbp(in, req.placement, desc.shape.rank());
    req.inputs.emplace_back(std::move(desc), nd);
  }
  if (in.Range(0, 3) == 0) {
    for (int b = 0; b < (*call)->num_blobs(); ++b) {
      if (in.Bool()) {
        req.constraints.push_back(std::nullopt);
      } else {
        req.constraints.push_back(GenNdSbp(in, req.placement, req.inputs.empty() ? 1 : common.rank()));
      }
    }
  }
  // The planned policy prices boxing on every candidate, within a budget
  // of seconds (docs/RELIABILITY.md, "Limits"), which is minutes under
  // ASan: keep it to meshes of at most 2 axes and 4 ranks so one input
  // stays fast (4 axes of extents 1-2 took over 30 s under ASan).
  if (req.placement.num_axes() <= 2 && req.placement.parallel_num() <= 4 &&
      in.Range(0, 3) == 0) {
    req.cost.policy = PolicyName::Planned();
  }
  req.cost.partial_penalty = static_cast<PartialPenalty>(in.Range(1, 3));
  req.explain = in.Bool();

  const std::string what = absl::StrCat((*call)->ToString(), " on ", req.placement.ToString());
  engine::Engine& engine = TheEngine();
  engine.ClearCaches();
  absl::StatusOr<std::shared_ptr<const InferResult>> cold = engine.Infer(req);
  CheckNotInternal(cold.status(), what);
  absl::StatusOr<std::shared_ptr<const InferResult>> warm = engine.Infer(req);
  std::unique_ptr<engine::Engine> fresh = NewEngine();
  absl::StatusOr<std::shared_ptr<const InferResult>> other = fresh->Infer(req);
  FUZZ_CHECK(cold.ok() == warm.ok() && cold.ok() == other.ok() &&
                 cold.status().ToString() == other.status().ToString(),
             absl::StrCat(what, ": ", cold.status().ToString(), " vs ",
                          other.status().ToString()));
  if (!cold.ok()) return;
  const std::string a = ResultString(**call, **cold);
  FUZZ_CHECK(a == ResultString(**call, **warm) && a == ResultString(**call, **other),
             absl::StrCat(what, ": not deterministic: ", a, " vs ",
                          ResultString(**call, **other)));

  const InferResult& r = **cold;
  FUZZ_CHECK(static_cast<int>(r.signature.size()) == (*call)->num_blobs(), what);
  FUZZ_CHECK(static_cast<int>(r.output_descs.size()) == (*call)->num_outputs(), what);
  for (const NdSbp& nd : r.signature) {
    FUZZ_CHECK(nd.size() == req.placement.num_axes(), absl::StrCat(what, ": ", a));
  }
  for (int o = 0; o < (*call)->num_outputs(); ++o) {
    CheckSlicesTile(r.output_descs[o].shape, r.signature[(*call)->num_inputs() + o],
                    req.placement, 1 << 10);
  }
}

}  // namespace
}  // namespace oneflow_sbp::fuzz

OFS_FUZZ_TARGET(oneflow_sbp::fuzz::FuzzOne)
