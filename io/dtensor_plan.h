// A program plan in PyTorch DTensor's spelling, for users who apply it to a
// torch module (oneflow_sbp.torch.apply_plan, or by hand with
// distribute_tensor): `sbp plan --dtensor_plan=PLAN.json` writes it and
// `sbp run --plan=PLAN.json` reads it back.
//
//   {"mesh_shape": [2, 2], "mesh_dim_names": ["dp", "tp"],
//    "parameters": {"fc1.weight": ["Replicate()", "Shard(1)"], ...},
//    "inputs": {"x": ["Shard(0)", "Replicate()"]},
//    "outputs": {"y": ["Shard(0)", "Replicate()"]},
//    "strategy": "Megatron"}
//
// One placement per mesh axis, in mesh order, as DTensor lists them: an
// SBP layout (S(1), B) is ["Shard(1)", "Replicate()"]; a partial sum is
// "Partial()", max and min "Partial(\"max\")" and "Partial(\"min\")".
// parameters: every weight (the program's free tensors and the parameters
// it keeps in a given layout) by name, its layout at rest. inputs: each
// graph input as its first reader reads it; a replicated input that the
// plan reads split can be fed split (each rank its shard), which costs no
// communication. outputs: each program output's final layout.
#ifndef IO_DTENSOR_PLAN_H_
#define IO_DTENSOR_PLAN_H_

#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "graph/program.h"
#include "graph/program_costs.h"
#include "oneflow_sbp/values/nd_sbp.h"

namespace oneflow_sbp::io {

// ["Shard(1)", "Replicate()"] for (S(1),B).
std::vector<std::string> DtensorPlacements(const NdSbp& nd);

// Mesh axis names when the user gives none: each axis named by what the
// plan does on it ("dp" replicated weights, "tp" tensor parallel, "fsdp"
// sharded and gathered, "tp_fsdp" both), numbered when two axes would share
// a name (DTensor requires distinct names). `per_axis` is
// graph::StrategyReport::per_axis.
std::vector<std::string> DefaultMeshDimNames(const std::vector<std::string>& per_axis);

// The plan's JSON text. `mesh_dim_names` has one name per mesh axis.
std::string DtensorPlanJson(const graph::Program& program, const graph::Assignment& assignment,
                            const std::vector<std::string>& mesh_dim_names,
                            absl::string_view strategy);

// The free tensors' layouts (in Program::FreeTensors() order) that a plan
// gives; every free tensor must be listed, with one placement per mesh
// axis of the program's placement. Errors (kInvalidArgument) name the file,
// the parameter and the bad value: a mesh_shape other than the program's, an
// unknown or missing parameter, a placement that does not parse, a layout
// the tensor's shape cannot take (a split of a dimension smaller than the
// mesh axis is allowed: OneFlow's uneven splits).
absl::StatusOr<std::vector<NdSbp>> FreeLayoutsFromDtensorPlan(absl::string_view json,
                                                              absl::string_view file,
                                                              const graph::Program& program);

}  // namespace oneflow_sbp::io

#endif  // IO_DTENSOR_PLAN_H_
