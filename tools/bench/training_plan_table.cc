// The training-plan table of docs/PLANNING.md: the whole training step
// (eager/expand_training_step.h) of the demo's LLaMA block and of GPT stacks
// planned on [2,2], [2,4] and [8] without a cap and under two memory caps
// (95% and 90% of the uncapped plan's peak per rank), with the
// strategy each plan amounts to (graph/training_step_info.h).
//
//   bazel run -c opt //tools/bench:training_plan_table -- $PWD/tests/testdata
//   bazel run -c opt //tools/bench:training_plan_table -- $PWD/tests/testdata "GPT 24 layers" 2,4
//
// The optional PROGRAM and MESH arguments (second line) keep only the rows
// of that program ("LLaMA block", "GPT 4 layers", ...) and mesh ("2,4").
//
// The LLaMA block is the demo's recording on each mesh (testdata's
// demo_mesh22.json, demo_mesh24.json and demo_mesh8.json, the last made by
// `sbp demo --mesh=8 --batch=8 --record=...`).
//
// Prints one Markdown row per (program, mesh, cap): strategy, planned and
// greedy step time, planned and greedy peak memory per rank, the time to
// expand the step and to plan it (wall), and the plan's CPU time (every
// thread of the process: the boxing pricing's too). The engine's boxing
// cache is shared by the rows, as one `sbp` process would share it.
#include <time.h>

#include <cstdio>
#include <fstream>
#include <functional>
#include <memory>
#include <sstream>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "absl/time/clock.h"
#include "eager/expand_training_step.h"
#include "graph/program_plan_format.h"
#include "graph/program_generators.h"
#include "graph/program_planner.h"
#include "graph/training_step_info.h"
#include "io/program_proto.h"
#include "oneflow_sbp/values/status_macros.h"
#include "ops/builtin_ops.h"
#include "tools/bench/plan_engine.h"

namespace oneflow_sbp::graph {
namespace {

using bench::NewPlanEngine;

// CPU seconds of the whole process so far.
double ProcessCpuSeconds() {
  timespec ts;
  clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &ts);
  return static_cast<double>(ts.tv_sec) + 1e-9 * static_cast<double>(ts.tv_nsec);
}

struct Source {
  std::string name;
  // Builds the forward program on a mesh.
  std::function<absl::StatusOr<Program>(const std::vector<int64_t>&)> make;
};

// The programs of the table: the demo's recorded block, and GPT programs of
// 4, 8 and 24 layers, each made for a given mesh.
std::vector<Source> TableSources(const std::string& testdata, engine::Engine& engine_ref) {
  engine::Engine* engine = &engine_ref;
  std::vector<Source> sources;
  // The demo's block as `sbp demo --record` wrote it on each mesh.
  sources.push_back({"LLaMA block", [testdata, engine](const std::vector<int64_t>& mesh)
                                        -> absl::StatusOr<Program> {
                       std::stringstream text;
                       text << std::ifstream(absl::StrCat(testdata, "/demo_mesh",
                                                          absl::StrJoin(mesh, ""), ".json"))
                                   .rdbuf();
                       return io::ProgramFromJson(text.str(), engine->registry());
                     }});
  for (int layers : {4, 8, 24}) {
    sources.push_back({absl::StrCat("GPT ", layers, " layers"),
                       [layers](const std::vector<int64_t>& mesh) -> absl::StatusOr<Program> {
                         int64_t n = 1;
                         for (int64_t m : mesh) n *= m;
                         absl::StatusOr<Placement> p = Placement::Make(
                             DeviceType::kCpu, [n] {
                               std::vector<int64_t> r;
                               for (int64_t i = 0; i < n; ++i) r.push_back(i);
                               return r;
                             }(),
                             mesh);
                         OFS_RETURN_IF_ERROR(p.status());
                         GptConfig c;
                         c.layers = layers;
                         return GptProgram(ops::BuiltinOpRegistry(), *p, c);
                       }});
  }
  return sources;
}

// `only_program` / `only_mesh` ("2,4"): empty keeps every program / mesh.
int Run(const std::string& testdata, const std::string& only_program,
        const std::string& only_mesh) {
  std::unique_ptr<engine::Engine> engine = NewPlanEngine();
  const std::vector<Source> sources = TableSources(testdata, *engine);
  const std::vector<std::vector<int64_t>> meshes = {{2, 2}, {2, 4}, {8}};
  std::printf("| program | mesh | cap | strategy (per axis) | planned | greedy | peak planned | "
              "peak greedy | expand + plan | plan CPU |\n|---|---|---|---|---|---|---|---|---|---|\n");
  for (const Source& src : sources) {
    if (!only_program.empty() && src.name != only_program) continue;
    for (const std::vector<int64_t>& mesh : meshes) {
      if (!only_mesh.empty() && absl::StrJoin(mesh, ",") != only_mesh) continue;
      absl::StatusOr<Program> fwd = src.make(mesh);
      if (!fwd.ok()) {
        std::printf("%s: %s\n", src.name.c_str(), fwd.status().ToString().c_str());
        return 1;
      }
      const absl::Time start = absl::Now();
      absl::StatusOr<TrainingStepInfo> step = eager::ExpandTrainingStep(*engine, *fwd, {});
      const double expand_s = absl::ToDoubleSeconds(absl::Now() - start);
      if (!step.ok()) {
        std::printf("%s: %s\n", src.name.c_str(), step.status().ToString().c_str());
        return 1;
      }
      int64_t uncapped_peak = 0;
      for (double fraction : {0.0, 0.95, 0.9}) {
        PlanProgramOptions options;
        if (fraction > 0) options.memory_cap_bytes = static_cast<int64_t>(uncapped_peak * fraction);
        const double cpu_start = ProcessCpuSeconds();
        absl::StatusOr<ProgramPlan> plan = PlanProgram(step->program, *engine, options);
        const double plan_cpu_s = ProcessCpuSeconds() - cpu_start;
        const std::string mesh_text = absl::StrCat("[", absl::StrJoin(mesh, ","), "]");
        const std::string cap =
            fraction > 0 ? absl::StrCat(static_cast<int>(fraction * 100), "% of uncapped") : "none";
        if (!plan.ok()) {
          std::printf("| %s | %s | %s | %s | | | | | | %s |\n", src.name.c_str(),
                      mesh_text.c_str(), cap.c_str(), std::string(plan.status().message()).c_str(),
                      FormatSeconds(plan_cpu_s).c_str());
          continue;
        }
        if (fraction == 0) uncapped_peak = plan->costs.peak_memory_bytes;
        const StrategyReport s = ClassifyStrategy(*step, plan->chosen);
        std::printf("| %s | %s | %s | %s (%s) | %s | %s | %s | %s | %s + %s%s | %s |\n", src.name.c_str(),
                    mesh_text.c_str(), cap.c_str(), s.name.c_str(),
                    absl::StrJoin(s.per_axis, "; ").c_str(),
                    FormatSeconds(plan->costs.total_time_s).c_str(),
                    FormatSeconds(plan->greedy_costs.total_time_s).c_str(),
                    FormatBytes(plan->costs.peak_memory_bytes).c_str(),
                    FormatBytes(plan->greedy_costs.peak_memory_bytes).c_str(),
                    FormatSeconds(expand_s).c_str(), FormatSeconds(plan->seconds).c_str(),
                    plan->stats.exact ? "" : ", local search",
                    FormatSeconds(plan_cpu_s).c_str());
        std::fflush(stdout);
      }
    }
  }
  return 0;
}

}  // namespace
}  // namespace oneflow_sbp::graph

int main(int argc, char** argv) {
  if (argc < 2 || argc > 4) {
    std::fprintf(stderr, "usage: training_plan_table TESTDATA_DIR [PROGRAM [MESH]]\n");
    return 2;
  }
  return oneflow_sbp::graph::Run(argv[1], argc > 2 ? argv[2] : "", argc > 3 ? argv[3] : "");
}
