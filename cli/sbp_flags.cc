// The `sbp` tool's flags: one definition each, with the help `sbp help`
// and the commands' --help show. Which command reads which is the command
// table's (command_table.cc); a flag a command does not list is exit 2.
#include "cli/sbp_flags.h"

#include <cstdint>
#include <optional>
#include <string>

#include "absl/flags/flag.h"
#include "absl/strings/match.h"

ABSL_FLAG(std::string, format, "text",
          "Output format: text, json (proto field names) or textproto.");
ABSL_FLAG(std::optional<std::string>, sbp, std::nullopt,
          "One SBP: B, P or S(<axis>).");
ABSL_FLAG(std::optional<std::string>, nd_sbp, std::nullopt,
          "An NdSbp, one SBP per mesh axis: '(S(0), B)'; 'S(0)' on a 1-D "
          "placement. JSON or text-format NdSbp messages work too.");
ABSL_FLAG(std::optional<std::string>, placement, std::nullopt,
          "Devices and mesh: 'cpu:0-3', 'cuda:0-7 [2,4]', 'cpu:0,2,4,6 [2,2]'. "
          "JSON or text-format ParallelConf messages work too.");
ABSL_FLAG(std::optional<std::string>, shape, std::nullopt,
          "Logical tensor shape: 10,6 or [10,6].");
ABSL_FLAG(std::string, dtype, "f32",
          "Element type: f16 bf16 f32 f64 i8 i32 i64 u8 bool.");
ABSL_FLAG(std::optional<std::string>, op, std::nullopt, "Op type name, e.g. matmul.");
ABSL_FLAG(std::optional<std::string>, from, std::nullopt, "Source nd_sbp for boxing.");
ABSL_FLAG(std::optional<std::string>, to, std::nullopt, "Destination nd_sbp for boxing.");
ABSL_FLAG(std::optional<std::string>, to_placement, std::nullopt,
          "Destination placement for boxing (default: --placement).");
ABSL_FLAG(std::optional<std::string>, cost, std::nullopt,
          "Cost policy: oneflow (OneFlow's choices, the default) or planned (rank by "
          "the cheapest real boxing plan).");
ABSL_FLAG(bool, explain, false, "Also list every candidate and why it won or lost.");
ABSL_FLAG(std::optional<std::string>, calibration, std::nullopt,
          "Link calibration file (text-format CalibrationProto, as `sbp calibrate` writes) "
          "for the planner, the planned cost policy and `sbp plan`.");
ABSL_FLAG(std::optional<std::string>, execute, std::nullopt,
          "boxing: also run the plan on real ranks: threads (default) or gloo. plan: run the plan and the greedy choice on rank threads.");
ABSL_FLAG(int, nproc, 0, "Rank processes or threads (launch, calibrate, boxing --execute).");
ABSL_FLAG(int, nproc_per_node, 0, "launch: rank processes on this node (torchrun's name for --nproc).");
ABSL_FLAG(int, nnodes, 1, "launch: number of nodes.");
ABSL_FLAG(int, node_rank, 0, "launch: this node's index.");
ABSL_FLAG(std::string, master_addr, "127.0.0.1", "launch: where rank 0 serves the rendezvous.");
ABSL_FLAG(int, master_port, 0, "launch: rendezvous port (0: pick a free one, one node only).");
ABSL_FLAG(std::string, backend, "threads", "calibrate, demo: threads or gloo.");
ABSL_FLAG(double, timeout, 0,
          "launch, demo, boxing --execute, calibrate: collective timeout in seconds "
          "(OFS_TIMEOUT; default 60).");
ABSL_FLAG(double, heartbeat_timeout, 0,
          "launch, demo, boxing --execute, calibrate: seconds before a silent rank is reported "
          "(OFS_HEARTBEAT_TIMEOUT; default 10, 0 off).");
ABSL_FLAG(std::string, rank_prefix, "auto",
          "launch: prefix each line of a rank's output with [rank N]: auto (when stdout is a "
          "terminal), yes or no.");
ABSL_FLAG(std::optional<std::string>, out, std::nullopt, "calibrate: file to write.");
ABSL_FLAG(uint64_t, seed, 1, "Seed of generated data.");
ABSL_FLAG(std::optional<int>, repeat, std::nullopt,
          "boxing --execute: timed re-runs of the checked plan (default 0). embed: timed runs "
          "of the texts after loading the weights once (default 1).");
ABSL_FLAG(std::string, device, "cpu",
          "verify, demo: where the ranks run the kernels, cpu or cuda (cuda needs a "
          "--config=cuda build and a GPU).");
ABSL_FLAG(std::string, mesh, "2,2",
          "demo: mesh extents (data parallel, tensor parallel). plan: replaces the program "
          "placement's hierarchy (only when given). verify: the one mesh to check (only "
          "when given).");
ABSL_FLAG(int64_t, batch, 4, "demo: batch size.");
ABSL_FLAG(int64_t, seq, 16, "demo: sequence length.");
ABSL_FLAG(int64_t, hidden, 64, "demo: hidden size.");
ABSL_FLAG(int64_t, heads, 4, "demo: attention heads.");
ABSL_FLAG(int64_t, ffn, 128, "demo: MLP inner size.");
ABSL_FLAG(int64_t, vocab, 128, "demo: vocabulary size.");
ABSL_FLAG(int, layers, 1, "demo: decoder layers.");
ABSL_FLAG(int, steps, 3, "demo: training steps.");
ABSL_FLAG(std::optional<std::string>, trace, std::nullopt,
          "demo: write a Chrome trace-event JSON of every rank (Perfetto).");
ABSL_FLAG(bool, all_ops, false, "demo: list backward ops too.");
ABSL_FLAG(std::optional<std::string>, record, std::nullopt,
          "demo: write step 0's training step as a program for `sbp plan` (and a .marked twin).");
ABSL_FLAG(std::string, model, "", "embed: the model directory (tools/fetch_model.sh).");
ABSL_FLAG(std::optional<std::string>, save, std::nullopt,
          "demo: save weights, Adam state and step count to this checkpoint directory.");
ABSL_FLAG(std::optional<std::string>, resume, std::nullopt,
          "demo: resume from this checkpoint directory (saved on any mesh).");
ABSL_FLAG(std::optional<std::string>, request, std::nullopt,
          "Inference request file (JSON or text-format InferRequestProto); - for stdin.");
ABSL_FLAG(std::optional<std::string>, program, std::nullopt,
          "Program file for `sbp plan` (JSON, see docs/PLANNING.md); - for stdin.");
ABSL_FLAG(std::optional<std::string>, memory_cap, std::nullopt,
          "Per-rank memory cap in bytes for `sbp plan`.");
ABSL_FLAG(std::optional<std::string>, work_budget, std::nullopt,
          "`sbp plan`: estimated boxing-planner steps the pricing may take (default 2^28).");
ABSL_FLAG(bool, collectives_only, false,
          "`sbp plan`: price every boxing by its cheapest plan made of collectives, never a "
          "p2p exchange (large meshes within the work budget).");
ABSL_FLAG(bool, training, false,
          "plan: plan the whole training step (forward, backward, gradient reductions, "
          "Adam updates) with the program's output as the loss.");

namespace oneflow_sbp::cli {

bool IsSbpFlag(const absl::CommandLineFlag& flag) {
  return absl::EndsWith(flag.Filename(), "cli/sbp_flags.cc");
}

}  // namespace oneflow_sbp::cli
