// Fuzz target: `sbp infer --request` bodies, JSON or text-format
// InferRequestProto, through the same RunInfer the tool calls.
//
// Input: byte 0 picks the output format; the rest is the request body.
// Properties: no crash; errors are never kInternal; the same request gives
// the same output (or the same error) with a cold and a warm cache.
#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>

#include "absl/status/statusor.h"
#include "absl/strings/str_cat.h"
#include "fuzz/fuzz_check.h"
#include "fuzz/fuzz_input.h"
#include "engine/engine.h"
#include "ops/builtin_ops.h"
#include "cli/cmd_infer.h"

namespace oneflow_sbp::fuzz {
namespace {

engine::Engine& TheEngine() {
  static engine::Engine* engine = [] {
    engine::Engine::Options options;
    options.registry = engine::Engine::Options::Borrow(ops::BuiltinOpRegistry());
    absl::StatusOr<std::unique_ptr<engine::Engine>> e = engine::Engine::Create(std::move(options));
    FUZZ_CHECK(e.ok(), e.status().ToString());
    return e->release();
  }();
  return *engine;
}

std::string Outcome(const absl::StatusOr<std::string>& r) {
  return r.ok() ? *r : r.status().ToString();
}

void FuzzOne(FuzzInput& in) {
  static const char* const kFormats[] = {"text", "json", "textproto", "table"};
  cli::InferOptions options;
  options.format = kFormats[in.Byte() % 4];
  options.request = std::string(in.Rest());
  engine::Engine& engine = TheEngine();
  engine.ClearCaches();
  const absl::StatusOr<std::string> cold = cli::RunInfer(options, engine);
  CheckNotInternal(cold.status(), "RunInfer");
  const absl::StatusOr<std::string> warm = cli::RunInfer(options, engine);
  FUZZ_CHECK(Outcome(cold) == Outcome(warm),
             absl::StrCat("cold and warm cache disagree:\n", Outcome(cold), "\n---\n",
                          Outcome(warm)));
}

}  // namespace
}  // namespace oneflow_sbp::fuzz

OFS_FUZZ_TARGET(oneflow_sbp::fuzz::FuzzOne)
