// Boxing plans for people and tools: protobuf (JSON/text dumps), a text
// report with every step's groups and bytes, and Graphviz dot (layouts as
// nodes, steps as labelled edges).
#ifndef IO_BOXING_PLAN_FORMAT_H_
#define IO_BOXING_PLAN_FORMAT_H_

#include <optional>
#include <string>

#include "boxing/boxing_plan.h"
#include "proto/boxing.pb.h"

namespace oneflow_sbp::io {

// `naive`, when given, fills the comparison fields.
oneflow::BoxingPlanProto PlanToProto(const boxing::BoxingPlan& plan,
                                     const boxing::BoxingPlan* naive = nullptr);
std::string PlanToText(const boxing::BoxingPlan& plan, const boxing::BoxingPlan* naive = nullptr);
std::string PlanToGraphviz(const boxing::BoxingPlan& plan);

}  // namespace oneflow_sbp::io
#endif  // IO_BOXING_PLAN_FORMAT_H_
