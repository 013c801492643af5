#include "io/dtensor_plan.h"

#include <map>
#include <set>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "io/json_string.h"
#include "io/json_value.h"
#include "oneflow_sbp/values/quoted_input.h"
#include "oneflow_sbp/values/status_macros.h"

namespace oneflow_sbp::io {
namespace {

std::string DtensorPlacement(SbpParallel sbp) {
  if (sbp.is_split()) return absl::StrCat("Shard(", sbp.split_axis(), ")");
  if (sbp.is_partial_sum()) return "Partial()";
  if (sbp.is_partial_max()) return "Partial(\"max\")";
  if (sbp.is_partial_min()) return "Partial(\"min\")";
  return "Replicate()";
}

std::string PlacementsJson(const NdSbp& nd) {
  std::vector<std::string> parts;
  for (const std::string& p : DtensorPlacements(nd)) parts.push_back(JsonString(p));
  return absl::StrCat("[", absl::StrJoin(parts, ", "), "]");
}

std::string Section(const std::vector<std::pair<std::string, NdSbp>>& entries) {
  std::vector<std::string> parts;
  for (const auto& [name, nd] : entries) {
    parts.push_back(absl::StrCat("\n    ", JsonString(name), ": ", PlacementsJson(nd)));
  }
  return absl::StrCat("{", absl::StrJoin(parts, ","), parts.empty() ? "}" : "\n  }");
}

absl::Status Bad(absl::string_view file, absl::string_view what) {
  return absl::InvalidArgumentError(absl::StrCat(file, ": ", what));
}

// `s` with `where` before its message (OK stays OK).
absl::Status Within(absl::string_view where, const absl::Status& s) {
  return s.ok() ? s : absl::Status(s.code(), absl::StrCat(where, ": ", s.message()));
}

// One parameter's placements, checked against the tensor.
absl::StatusOr<NdSbp> ReadLayout(const JsonValue& v, const graph::ProgramTensor& t,
                                 int axes, absl::string_view file) {
  const std::string where = absl::StrCat("parameter ", QuotedInput(t.name));
  if (v.kind != JsonValue::kArray || static_cast<int>(v.array.size()) != axes) {
    return Bad(file, absl::StrCat(where, ": expected an array of ", axes,
                                  " placements (one per mesh axis), got ",
                                  v.kind == JsonValue::kArray
                                      ? absl::StrCat(v.array.size(), " entries")
                                      : std::string(JsonValue::KindName(v.kind))));
  }
  std::vector<SbpParallel> sbps;
  for (const JsonValue& p : v.array) {
    if (p.kind != JsonValue::kString) {
      return Bad(file, absl::StrCat(where, ": a placement is ", JsonValue::KindName(p.kind),
                                    ", expected a string such as \"Shard(0)\""));
    }
    absl::StatusOr<SbpParallel> sbp = SbpParallel::Parse(p.string);
    OFS_RETURN_IF_ERROR(Within(absl::StrCat(file, ": ", where), sbp.status()));
    if (sbp->is_split() && sbp->split_axis() >= t.desc.shape.rank()) {
      return Bad(file, absl::StrCat(where, ": ", QuotedInput(p.string), " but the tensor is ",
                                    t.desc.ToString()));
    }
    if (sbp->is_partial()) {
      return Bad(file, absl::StrCat(where, ": ", QuotedInput(p.string),
                                    ": a stored weight holds values, not partial sums"));
    }
    sbps.push_back(*sbp);
  }
  return NdSbp::Make(sbps);
}

}  // namespace

std::vector<std::string> DtensorPlacements(const NdSbp& nd) {
  std::vector<std::string> out;
  for (int i = 0; i < nd.size(); ++i) out.push_back(DtensorPlacement(nd[i]));
  return out;
}

std::vector<std::string> DefaultMeshDimNames(const std::vector<std::string>& per_axis) {
  std::vector<std::string> names;
  for (const std::string& s : per_axis) {
    names.push_back(s == "Megatron" ? "tp" : s == "ZeRO" ? "fsdp"
                    : s == "Megatron + ZeRO" ? "tp_fsdp" : "dp");
  }
  // Numbered in mesh order when repeated: dp0, dp1.
  std::map<std::string, int> count, seen;
  for (const std::string& n : names) ++count[n];
  for (std::string& n : names) {
    if (count[n] > 1) n = absl::StrCat(n, seen[n]++);
  }
  return names;
}

std::string DtensorPlanJson(const graph::Program& program, const graph::Assignment& assignment,
                            const std::vector<std::string>& mesh_dim_names,
                            absl::string_view strategy) {
  const std::vector<NdSbp> layouts = graph::TensorLayouts(program, assignment);
  std::vector<std::pair<std::string, NdSbp>> parameters, inputs, outputs;
  for (size_t id = 0; id < program.tensors().size(); ++id) {
    const graph::ProgramTensor& t = program.tensors()[id];
    if (t.role == graph::TensorRole::kFree || (t.role == graph::TensorRole::kFixed && t.parameter)) {
      parameters.emplace_back(t.name, layouts[id]);
    } else if (t.role == graph::TensorRole::kFixed) {
      // As the first reader reads it (see the header); unread: as given.
      const NdSbp read = t.uses.empty()
                             ? t.nd_sbp
                             : assignment.op_signatures[t.uses[0].op][t.uses[0].blob];
      inputs.emplace_back(t.name, read);
    }
  }
  for (const graph::ProgramOutput& o : program.outputs()) {
    outputs.emplace_back(program.tensors()[o.tensor].name,
                         graph::OutputTarget(o, layouts[o.tensor]));
  }
  std::vector<std::string> names;
  for (const std::string& n : mesh_dim_names) names.push_back(JsonString(n));
  return absl::StrCat("{\n  \"mesh_shape\": [",
                      absl::StrJoin(program.placement().hierarchy(), ", "),
                      "],\n  \"mesh_dim_names\": [", absl::StrJoin(names, ", "),
                      "],\n  \"parameters\": ", Section(parameters),
                      ",\n  \"inputs\": ", Section(inputs), ",\n  \"outputs\": ", Section(outputs),
                      ",\n  \"strategy\": ", JsonString(strategy), "\n}\n");
}

absl::StatusOr<std::vector<NdSbp>> FreeLayoutsFromDtensorPlan(absl::string_view json,
                                                              absl::string_view file,
                                                              const graph::Program& program) {
  absl::StatusOr<JsonValue> doc = ParseStrictJson(json);
  OFS_RETURN_IF_ERROR(Within(file, doc.status()));
  if (doc->kind != JsonValue::kObject) return Bad(file, "expected a JSON object");
  const auto mesh = program.placement().hierarchy();
  const JsonValue* shape = doc->Find("mesh_shape");
  std::vector<int64_t> given;
  if (shape != nullptr && shape->kind == JsonValue::kArray) {
    for (const JsonValue& e : shape->array) given.push_back(static_cast<int64_t>(e.number));
  }
  if (!std::equal(given.begin(), given.end(), mesh.begin(), mesh.end())) {
    return Bad(file, absl::StrCat("mesh_shape [", absl::StrJoin(given, ", "),
                                  "] is not the program's mesh [", absl::StrJoin(mesh, ", "),
                                  "]: plan for this mesh, or run on the plan's"));
  }
  const JsonValue* params = doc->Find("parameters");
  if (params == nullptr || params->kind != JsonValue::kObject) {
    return Bad(file, "no \"parameters\" object");
  }
  std::map<std::string, int> by_name;
  for (size_t id = 0; id < program.tensors().size(); ++id) {
    by_name[program.tensors()[id].name] = static_cast<int>(id);
  }
  std::map<int, NdSbp> layouts;
  for (const auto& [name, v] : params->object) {
    auto it = by_name.find(name);
    if (it == by_name.end() || program.tensors()[it->second].role == graph::TensorRole::kActivation) {
      return Bad(file, absl::StrCat("parameter ", QuotedInput(name), " is not a weight of the program"));
    }
    const graph::ProgramTensor& t = program.tensors()[it->second];
    OFS_ASSIGN_OR_RETURN(NdSbp nd, ReadLayout(v, t, static_cast<int>(mesh.size()), file));
    if (t.role == graph::TensorRole::kFixed && !(nd == t.nd_sbp)) {
      return Bad(file, absl::StrCat("parameter ", QuotedInput(name), ": ", nd.ToString(),
                                    " but the program fixes it as ", t.nd_sbp.ToString()));
    }
    layouts[it->second] = nd;
  }
  std::vector<NdSbp> out;
  for (int id : program.FreeTensors()) {
    auto it = layouts.find(id);
    if (it == layouts.end()) {
      return Bad(file, absl::StrCat("parameter ", QuotedInput(program.tensors()[id].name),
                                    " has no layout in the plan"));
    }
    out.push_back(it->second);
  }
  return out;
}

}  // namespace oneflow_sbp::io
