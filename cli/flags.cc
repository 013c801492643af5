// The `sbp` tool's flags: one entry each, with its type, default and the
// help `sbp help` shows. Which command takes which is the command table's
// (command_table.cc); a flag a command does not list is exit 2.
#include "cli/flags.h"

#include <cstdint>
#include <optional>
#include <string>

#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "oneflow_sbp/values/check.h"
#include "oneflow_sbp/values/quoted_input.h"

namespace oneflow_sbp::cli {
namespace {

// Sorted by nothing in particular: the order `sbp help` lists them in.
constexpr FlagSpec kFlags[] = {
    {"format", FlagType::kText, "text",
     "Output format: text, json (proto field names) or textproto."},
    {"sbp", FlagType::kText, nullptr,
     "One SBP: B, P or S(<axis>)."},
    {"nd_sbp", FlagType::kText, nullptr,
     "An NdSbp, one SBP per mesh axis: '(S(0), B)'; 'S(0)' on a 1-D "
     "placement. JSON or text-format NdSbp messages work too."},
    {"placement", FlagType::kText, nullptr,
     "Devices and mesh: 'cpu:0-3', 'cuda:0-7 [2,4]', 'cpu:0,2,4,6 [2,2]'. "
     "JSON or text-format ParallelConf messages work too."},
    {"shape", FlagType::kText, nullptr,
     "Logical tensor shape: 10,6 or [10,6]."},
    {"dtype", FlagType::kText, "f32",
     "Element type: f16 bf16 f32 f64 i8 i32 i64 u8 bool."},
    {"op", FlagType::kText, nullptr,
     "Op type name, e.g. matmul."},
    {"from", FlagType::kText, nullptr,
     "Source nd_sbp for boxing."},
    {"to", FlagType::kText, nullptr,
     "Destination nd_sbp for boxing."},
    {"to_placement", FlagType::kText, nullptr,
     "Destination placement for boxing (default: --placement)."},
    {"cost", FlagType::kText, nullptr,
     "Cost policy: oneflow (OneFlow's choices, the default) or planned "
     "(rank by the cheapest real boxing plan)."},
    {"explain", FlagType::kBool, "false",
     "Also list every candidate and why it won or lost."},
    {"calibration", FlagType::kText, nullptr,
     "Link calibration file (text-format CalibrationProto, as `sbp "
     "calibrate` writes) for the planner, the planned cost policy and `sbp "
     "plan`."},
    {"execute", FlagType::kText, nullptr,
     "boxing: also run the plan on real ranks: threads (default) or gloo. "
     "plan: run the plan and the greedy choice on rank threads."},
    {"nproc", FlagType::kInt, "0",
     "Rank processes or threads (launch, calibrate, boxing --execute)."},
    {"nproc_per_node", FlagType::kInt, "0",
     "launch: rank processes on this node (torchrun's name for --nproc)."},
    {"nnodes", FlagType::kInt, "1",
     "launch: number of nodes."},
    {"node_rank", FlagType::kInt, "0",
     "launch: this node's index."},
    {"master_addr", FlagType::kText, "127.0.0.1",
     "launch: where rank 0 serves the rendezvous."},
    {"master_port", FlagType::kInt, "0",
     "launch: rendezvous port (0: pick a free one, one node only)."},
    {"backend", FlagType::kText, "threads",
     "calibrate, demo, run: threads or gloo."},
    {"timeout", FlagType::kDouble, "0",
     "launch, demo, boxing --execute, calibrate: collective timeout in "
     "seconds (OFS_TIMEOUT; default 60)."},
    {"heartbeat_timeout", FlagType::kDouble, "0",
     "launch, demo, boxing --execute, calibrate: seconds before a silent "
     "rank is reported (OFS_HEARTBEAT_TIMEOUT; default 10, 0 off)."},
    {"rank_prefix", FlagType::kText, "auto",
     "launch: prefix each line of a rank's output with [rank N]: auto "
     "(when stdout is a terminal), yes or no."},
    {"out", FlagType::kText, nullptr,
     "calibrate: file to write. import: directory to write. run: "
     "safetensors file of the outputs (output_0, ... and by name)."},
    {"weights", FlagType::kText, nullptr,
     "run: safetensors file of the program's weights by name (sbp import "
     "writes DIR/weights.safetensors)."},
    {"inputs", FlagType::kText, nullptr,
     "run: safetensors file of the program's inputs, by name or as "
     "input_0, input_1, ..."},
    {"plan", FlagType::kText, nullptr,
     "run: a DTensor plan file (sbp plan --dtensor_plan) for the "
     "parameters' layouts (default: the planner's choice)."},
    {"expect", FlagType::kText, nullptr,
     "run: safetensors file of reference outputs (by name or output_N); "
     "exit 1 when an output is further than --rtol."},
    {"rtol", FlagType::kDouble, "1e-5",
     "run: tolerance for --expect, relative to the largest reference value."},
    {"dtensor_plan", FlagType::kText, nullptr,
     "plan: also write the plan in DTensor's spelling to this JSON file."},
    {"mesh_dim_names", FlagType::kText, nullptr,
     "plan: names of the mesh axes in --dtensor_plan, e.g. dp,tp (default: "
     "named by what the plan does on each axis)."},
    {"dims", FlagType::kText, nullptr,
     "import: values of the model's symbolic dimensions, batch=8,seq=16."},
    {"seed", FlagType::kUint64, "1",
     "Seed of generated data."},
    {"repeat", FlagType::kInt, nullptr,
     "boxing --execute: timed re-runs of the checked plan (default 0). "
     "embed: timed runs of the texts after loading the weights once "
     "(default 1)."},
    {"device", FlagType::kText, "cpu",
     "verify, demo: where the ranks run the kernels, cpu or cuda (cuda "
     "needs a --config=cuda build and a GPU)."},
    {"mesh", FlagType::kText, "2,2",
     "demo: mesh extents (data parallel, tensor parallel). plan: replaces "
     "the program placement's hierarchy (only when given). verify: the one "
     "mesh to check (only when given)."},
    {"batch", FlagType::kInt64, "4",
     "demo: batch size."},
    {"seq", FlagType::kInt64, "16",
     "demo: sequence length."},
    {"hidden", FlagType::kInt64, "64",
     "demo: hidden size."},
    {"heads", FlagType::kInt64, "4",
     "demo: attention heads."},
    {"ffn", FlagType::kInt64, "128",
     "demo: MLP inner size."},
    {"vocab", FlagType::kInt64, "128",
     "demo: vocabulary size."},
    {"layers", FlagType::kInt, "1",
     "demo: decoder layers."},
    {"steps", FlagType::kInt, "3",
     "demo: training steps."},
    {"trace", FlagType::kText, nullptr,
     "demo: write a Chrome trace-event JSON of every rank (Perfetto)."},
    {"all_ops", FlagType::kBool, "false",
     "demo: list backward ops too."},
    {"record", FlagType::kText, nullptr,
     "demo: write step 0's training step as a program for `sbp plan` (and "
     "a .marked twin)."},
    {"model", FlagType::kText, "",
     "embed: the model directory (tools/fetch_model.sh)."},
    {"save", FlagType::kText, nullptr,
     "demo: save weights, Adam state and step count to this checkpoint "
     "directory."},
    {"resume", FlagType::kText, nullptr,
     "demo: resume from this checkpoint directory (saved on any mesh)."},
    {"request", FlagType::kText, nullptr,
     "Inference request file (JSON or text-format InferRequestProto); - "
     "for stdin."},
    {"program", FlagType::kText, nullptr,
     "Program file for `sbp plan` (JSON, see docs/PLANNING.md); - for "
     "stdin."},
    {"memory_cap", FlagType::kText, nullptr,
     "Per-rank memory cap in bytes for `sbp plan`."},
    {"work_budget", FlagType::kText, nullptr,
     "`sbp plan`: estimated boxing-planner steps the pricing may take "
     "(default 2^28)."},
    {"collectives_only", FlagType::kBool, "false",
     "`sbp plan`: price every boxing by its cheapest plan made of "
     "collectives, never a p2p exchange (large meshes within the work "
     "budget)."},
    {"training", FlagType::kBool, "false",
     "plan: plan the whole training step (forward, backward, gradient "
     "reductions, Adam updates) with the program's output as the loss."},
};

const char* Expected(FlagType type) {
  switch (type) {
    case FlagType::kBool:
      return "true or false";
    case FlagType::kInt:
    case FlagType::kInt64:
      return "an integer";
    case FlagType::kUint64:
      return "a non-negative integer";
    case FlagType::kDouble:
      return "a number";
    case FlagType::kText:
      break;
  }
  return "a value";
}

// `text` as a value of `type`, or nullopt when it is not one.
std::optional<FlagValue> ParseValue(FlagType type, absl::string_view text) {
  switch (type) {
    case FlagType::kText:
      return FlagValue(std::string(text));
    case FlagType::kBool: {
      bool b = false;
      if (!absl::SimpleAtob(text, &b)) return std::nullopt;
      return FlagValue(b);
    }
    case FlagType::kInt: {
      int32_t v = 0;
      if (!absl::SimpleAtoi(text, &v)) return std::nullopt;
      return FlagValue(static_cast<int64_t>(v));
    }
    case FlagType::kInt64: {
      int64_t v = 0;
      if (!absl::SimpleAtoi(text, &v)) return std::nullopt;
      return FlagValue(v);
    }
    case FlagType::kUint64: {
      uint64_t v = 0;
      if (text.empty() || text[0] == '-' || !absl::SimpleAtoi(text, &v)) return std::nullopt;
      return FlagValue(v);
    }
    case FlagType::kDouble: {
      double v = 0;
      if (!absl::SimpleAtod(text, &v)) return std::nullopt;
      return FlagValue(v);
    }
  }
  return std::nullopt;
}

}  // namespace

absl::Span<const FlagSpec> AllFlags() { return kFlags; }

const FlagSpec* FindFlag(absl::string_view name) {
  for (const FlagSpec& f : kFlags) {
    if (name == f.name) return &f;
  }
  return nullptr;
}

absl::Status FlagValues::Set(const FlagSpec& spec, absl::string_view text) {
  std::optional<FlagValue> v = ParseValue(spec.type, text);
  if (!v) {
    return absl::InvalidArgumentError(absl::StrCat("bad value ", QuotedInput(text), " for --",
                                                   spec.name, ": expected ", Expected(spec.type)));
  }
  values_.insert_or_assign(spec.name, *std::move(v));
  return absl::OkStatus();
}

bool FlagValues::given(absl::string_view name) const {
  return values_.find(name) != values_.end();
}

std::optional<FlagValue> FlagValues::Value(absl::string_view name, FlagType type) const {
  const FlagSpec* spec = FindFlag(name);
  // A runner reads only the flags of the table, as the type they are.
  OFS_CHECK(spec != nullptr && spec->type == type) << "flag --" << name;
  auto it = values_.find(name);
  if (it != values_.end()) return it->second;
  if (spec->default_value == nullptr) return std::nullopt;
  std::optional<FlagValue> d = ParseValue(type, spec->default_value);
  OFS_CHECK(d.has_value()) << "the default of --" << name;
  return d;
}

// The value of a flag that always has one (given, or its default).
template <typename T>
T FlagValues::Required(absl::string_view name, FlagType type) const {
  const std::optional<FlagValue> v = Value(name, type);
  OFS_CHECK(v.has_value()) << "--" << name << " has no default";
  return std::get<T>(*v);
}

std::optional<std::string> FlagValues::Text(absl::string_view name) const {
  const std::optional<FlagValue> v = Value(name, FlagType::kText);
  if (!v) return std::nullopt;
  return std::get<std::string>(*v);
}

std::string FlagValues::String(absl::string_view name) const { return Text(name).value_or(""); }

bool FlagValues::Bool(absl::string_view name) const {
  return Required<bool>(name, FlagType::kBool);
}

std::optional<int> FlagValues::OptionalInt(absl::string_view name) const {
  const std::optional<FlagValue> v = Value(name, FlagType::kInt);
  if (!v) return std::nullopt;
  return static_cast<int>(std::get<int64_t>(*v));
}

int FlagValues::Int(absl::string_view name) const {
  return static_cast<int>(Required<int64_t>(name, FlagType::kInt));
}

int64_t FlagValues::Int64(absl::string_view name) const {
  return Required<int64_t>(name, FlagType::kInt64);
}

uint64_t FlagValues::Uint64(absl::string_view name) const {
  return Required<uint64_t>(name, FlagType::kUint64);
}

double FlagValues::Double(absl::string_view name) const {
  return Required<double>(name, FlagType::kDouble);
}

}  // namespace oneflow_sbp::cli
