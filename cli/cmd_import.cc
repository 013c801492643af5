#include "cli/cmd_import.h"

#include <sys/stat.h>

#include <cerrno>
#include <cstring>
#include <map>

#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "absl/strings/str_split.h"
#include "checkpoint/safetensors.h"
#include "google/protobuf/util/json_util.h"
#include "importers/onnx_import.h"
#include "io/program_proto.h"
#include "oneflow_sbp/values/status_macros.h"

namespace oneflow_sbp::cli {
namespace {

absl::StatusOr<std::map<std::string, int64_t>> ParseDims(const std::string& text) {
  std::map<std::string, int64_t> dims;
  for (absl::string_view item : absl::StrSplit(text, ',', absl::SkipEmpty())) {
    std::pair<std::string, std::string> kv = absl::StrSplit(item, absl::MaxSplits('=', 1));
    int64_t v = 0;
    if (kv.first.empty() || !absl::SimpleAtoi(kv.second, &v) || v < 1) {
      return absl::InvalidArgumentError(absl::StrCat(
          "--dims: '", item, "' is not NAME=N with N >= 1 (e.g. --dims=batch=8,seq=16)"));
    }
    dims[kv.first] = v;
  }
  return dims;
}

// One line per tensor and op, as the hand-written programs are
// (tests/testdata/plan_mlp.json); values in protobuf's JSON.
absl::StatusOr<std::string> ProgramJson(const oneflow::ProgramProto& program) {
  google::protobuf::util::JsonPrintOptions print;
  print.preserve_proto_field_names = true;
  auto one = [&](const google::protobuf::Message& m) -> absl::StatusOr<std::string> {
    std::string json;
    if (!google::protobuf::util::MessageToJsonString(m, &json, print).ok()) {
      return absl::InternalError("program.json: the program does not print as JSON");
    }
    return json;
  };
  std::string out = absl::StrCat("{\"placement\": \"", program.placement(), "\",\n \"tensors\": [");
  for (int i = 0; i < program.tensors_size(); ++i) {
    OFS_ASSIGN_OR_RETURN(std::string t, one(program.tensors(i)));
    absl::StrAppend(&out, i == 0 ? "\n  " : ",\n  ", t);
  }
  absl::StrAppend(&out, "],\n \"ops\": [");
  for (int i = 0; i < program.ops_size(); ++i) {
    OFS_ASSIGN_OR_RETURN(std::string op, one(program.ops(i)));
    absl::StrAppend(&out, i == 0 ? "\n  " : ",\n  ", op);
  }
  absl::StrAppend(&out, "],\n \"outputs\": [");
  for (int i = 0; i < program.outputs_size(); ++i) {
    OFS_ASSIGN_OR_RETURN(std::string o, one(program.outputs(i)));
    absl::StrAppend(&out, i == 0 ? "" : ", ", o);
  }
  absl::StrAppend(&out, "]}\n");
  return out;
}

bool EndsWith(const std::string& s, const std::string& suffix) {
  return s.size() >= suffix.size() && s.compare(s.size() - suffix.size(), suffix.size(), suffix) == 0;
}

}  // namespace

absl::StatusOr<std::string> RunImport(const ImportCmdOptions& o, const OpRegistry& registry) {
  if (!EndsWith(o.model, ".onnx")) {
    return absl::InvalidArgumentError(absl::StrCat(
        o.model, ": not an .onnx file (sbp import reads ONNX models; torch.export's .pt2 "
                 "is not supported yet)"));
  }
  importers::ImportOptions options;
  options.placement = o.placement;
  options.registry = &registry;
  OFS_ASSIGN_OR_RETURN(options.dims, ParseDims(o.dims));
  OFS_ASSIGN_OR_RETURN(importers::ImportedModel m, importers::ImportOnnx(o.model, options));
  // The program must build as `sbp plan` will build it: every op's shape
  // function has run in the importer, this checks the file as a whole.
  OFS_RETURN_IF_ERROR(io::ProgramFromProto(m.program, registry).status());
  if (::mkdir(o.out.c_str(), 0755) != 0 && errno != EEXIST) {
    return absl::UnavailableError(absl::StrCat("mkdir ", o.out, ": ", std::strerror(errno)));
  }
  OFS_ASSIGN_OR_RETURN(const std::string json, ProgramJson(m.program));
  const std::string program_path = absl::StrCat(o.out, "/program.json");
  OFS_RETURN_IF_ERROR(checkpoint::WriteFileAtomically(program_path, json));
  const std::string weights_path = absl::StrCat(o.out, "/weights.safetensors");
  if (!m.weights.empty()) {
    OFS_RETURN_IF_ERROR(checkpoint::WriteSafetensors(weights_path, m.weights,
                                                     {{"source", o.model}}));
  }
  std::vector<std::string> mapped;
  int nodes = 0;
  for (const auto& [op, n] : m.mapped) {
    mapped.push_back(absl::StrCat(op, " x", n));
    nodes += n;
  }
  int64_t weight_bytes = 0;
  for (const auto& [name, t] : m.weights) weight_bytes += t.byte_size();
  if (o.format == "json") {
    std::string out = absl::StrCat("{\"model\": \"", o.model, "\", \"opset\": ", m.opset,
                                   ", \"program\": \"", program_path, "\", \"weights\": ");
    absl::StrAppend(&out, m.weights.empty() ? "null" : absl::StrCat("\"", weights_path, "\""),
                    ", \"nodes\": ", nodes, ", \"ops\": ", m.program.ops_size(),
                    ", \"constant_tensors\": ", m.weights.size() + m.weightless.size(),
                    ", \"weight_bytes\": ", weight_bytes, ", \"mapped\": {");
    std::vector<std::string> parts;
    for (const auto& [op, n] : m.mapped) parts.push_back(absl::StrCat("\"", op, "\": ", n));
    absl::StrAppend(&out, absl::StrJoin(parts, ", "), "}, \"folded\": {");
    parts.clear();
    for (const auto& [op, n] : m.folded) parts.push_back(absl::StrCat("\"", op, "\": ", n));
    absl::StrAppend(&out, absl::StrJoin(parts, ", "), "}, \"weightless\": [");
    parts.clear();
    for (const std::string& w : m.weightless) parts.push_back(absl::StrCat("\"", w, "\""));
    absl::StrAppend(&out, absl::StrJoin(parts, ", "), "]}\n");
    return out;
  }
  std::string out = absl::StrCat(o.model, ": ONNX opset ", m.opset, ", ", nodes, " nodes -> ",
                                 m.program.ops_size(), " ops\n");
  absl::StrAppend(&out, "  mapped: ", absl::StrJoin(mapped, ", "), "\n");
  absl::StrAppend(&out, "  constant tensors: ", m.weights.size() + m.weightless.size(), " (",
                  weight_bytes, " bytes", m.weightless.empty() ? "" : "; ",
                  m.weightless.empty() ? "" : absl::StrCat(m.weightless.size(), " without data"),
                  ")\n");
  std::vector<std::string> folded;
  for (const auto& [op, n] : m.folded) folded.push_back(absl::StrCat(op, " x", n));
  if (!folded.empty()) absl::StrAppend(&out, "  folded: ", absl::StrJoin(folded, ", "), "\n");
  absl::StrAppend(&out, "wrote ", program_path);
  if (!m.weights.empty()) absl::StrAppend(&out, " and ", weights_path);
  absl::StrAppend(&out, "\n");
  return out;
}

}  // namespace oneflow_sbp::cli
