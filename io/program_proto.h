// Protobuf boundary of graph-level selection: programs from ProgramProto
// (JSON files, `sbp plan --program`) and plans to ProgramPlanProto
// (`sbp plan --format=json`). proto/program.proto has the messages and
// docs/PLANNING.md the format.
//
//   absl::StatusOr<graph::Program> p = ProgramFromJson(text, registry);
//   absl::StatusOr<graph::ProgramPlan> plan = graph::PlanProgram(*p, engine, {});
//   oneflow::ProgramPlanProto out = ProgramPlanToProto(*p, *plan);
#ifndef IO_PROGRAM_PROTO_H_
#define IO_PROGRAM_PROTO_H_

#include <cstdint>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "absl/types/span.h"
#include "graph/program.h"
#include "graph/program_planner.h"
#include "graph/training_step_info.h"
#include "oneflow_sbp/rule_api/op_registry.h"
#include "proto/program.pb.h"

namespace oneflow_sbp::io {

// Builds the program (graph::ProgramBuilder). `mesh`, if not empty,
// replaces the placement's hierarchy (the same ranks if its product is
// their count, else ranks 0..product-1 of the same device type). Every
// error is kInvalidArgument naming the op (label), tensor or field and the
// bad value: a missing placement, tensor name or op type, a bad shape,
// dtype or nd_sbp, an unknown op, an attribute value of the wrong kind, a
// tensor read before it is defined, a shape function's complaint.
absl::StatusOr<graph::Program> ProgramFromProto(const oneflow::ProgramProto& proto,
                                                const OpRegistry& registry,
                                                absl::Span<const int64_t> mesh = {});
// Parses JSON (unknown fields are errors) and builds.
absl::StatusOr<graph::Program> ProgramFromJson(absl::string_view json, const OpRegistry& registry,
                                               absl::Span<const int64_t> mesh = {});

// Parses JSON (unknown fields are errors) without building: for the
// fields that are not the program itself ("training").
absl::StatusOr<oneflow::ProgramProto> ProgramProtoFromJson(absl::string_view json);

oneflow::ProgramPlanProto ProgramPlanToProto(const graph::Program& program,
                                             const graph::ProgramPlan& plan);
// The training section of a training step's plan (ProgramPlanToProto of
// step.program gives the rest).
oneflow::PlanTrainingProto TrainingPlanToProto(const graph::TrainingStepInfo& step,
                                               const graph::ProgramPlan& plan);

}  // namespace oneflow_sbp::io
#endif  // IO_PROGRAM_PROTO_H_
