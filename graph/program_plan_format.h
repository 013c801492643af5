// Human renderings of a ProgramPlan (program_planner.h): the text report
// and the Graphviz drawing `sbp plan` prints. The JSON form is
// ProgramPlanToProto (io/program_proto.h).
//
//   std::string text = ProgramPlanToText(program, plan);
//   std::string dot = ProgramPlanToDot(program, plan);   // dot -Tsvg
//
// Text: every op's chosen signature (and the greedy one where it differs),
// every free tensor's layout, every read or output that needs boxing with
// its plan, then totals for the plan and for the eager greedy choice side
// by side, and the solver's statistics.
//
// Dot: ops as boxes (label, type, chosen signature), fixed and free
// tensors as ellipses, program outputs as double circles; an edge per read
// labelled with the tensor and, where it is boxed, the plan and its time.
// Edge colours: grey where nothing moves, else from yellow (cheap) to red
// (the costliest edge), by the edge's share of the costliest edge's time.
#ifndef GRAPH_PROGRAM_PLAN_FORMAT_H_
#define GRAPH_PROGRAM_PLAN_FORMAT_H_

#include <cstdint>
#include <string>

#include "graph/program.h"
#include "graph/program_planner.h"
#include "graph/training_step_info.h"

namespace oneflow_sbp::graph {

std::string ProgramPlanToText(const Program& program, const ProgramPlan& plan);
std::string ProgramPlanToDot(const Program& program, const ProgramPlan& plan);
// The training section `sbp plan --training` appends to the text report of
// `step.program`'s plan: op counts, memory per rank by tensor kind for the
// plan and the greedy choice (graph/training_step_info.h's liveness model), and
// the strategy each amounts to.
std::string TrainingPlanToText(const TrainingStepInfo& step, const ProgramPlan& plan);

// "12.3 us", "4.56 ms", "1.2 s"; "unsupported" for infinity.
std::string FormatSeconds(double seconds);
// "512 B", "4.0 KiB", "3.5 MiB", "1.2 GiB".
std::string FormatBytes(int64_t bytes);

}  // namespace oneflow_sbp::graph

#endif  // GRAPH_PROGRAM_PLAN_FORMAT_H_
