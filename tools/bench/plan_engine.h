// The engine the graph-planning benchmarks and the training-plan table
// use: the built-in ops and a boxing plan cache large enough that a whole
// program's plans stay cached (a cold engine per iteration measures what a
// fresh `sbp plan` process pays).
#ifndef TOOLS_BENCH_PLAN_ENGINE_H_
#define TOOLS_BENCH_PLAN_ENGINE_H_

#include <memory>
#include <utility>

#include "engine/engine.h"
#include "ops/builtin_ops.h"

namespace oneflow_sbp::bench {

inline std::unique_ptr<engine::Engine> NewPlanEngine() {
  engine::Engine::Options o;
  o.registry = engine::Engine::Options::Borrow(ops::BuiltinOpRegistry());
  o.plan_cache_capacity = 1 << 16;
  return *engine::Engine::Create(std::move(o));
}

}  // namespace oneflow_sbp::bench

#endif  // TOOLS_BENCH_PLAN_ENGINE_H_
