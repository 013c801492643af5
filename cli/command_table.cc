// The `sbp` command table: every command's name, summary, help, the flags
// it reads and the --format values it prints. A flag a command does not
// list is a wrong command line (exit 2) naming the command, so nothing is
// accepted and then ignored. Each names its runner (command_runners.h).
#include "cli/command_table.h"

#include "cli/command_runners.h"

namespace oneflow_sbp::cli {
namespace {

constexpr CommandSpec kCommands[] = {
    {"parse", "normalise and validate sbp, nd_sbp, placement, shape, dtype",
     "sbp nd_sbp placement shape dtype format",
     "text|json|textproto", -1,
     R"help(sbp parse [VALUE...] [--sbp=S] [--nd_sbp=ND] [--placement=PL]
          [--shape=SHAPE] [--dtype=DT] [--format=text|json|textproto]

Reads each value, checks it, and prints its canonical form. Values may be
given as flags or as plain arguments (recognised by their form).

  $ sbp parse '(S(0),B)' 'cuda:0-7 [2,4]'
  nd_sbp:    (S(0), B)   (long form S(0),B, 2 mesh axes)
  placement: cuda:0-7 [2,4]   (8 ranks, hierarchy [2,4])

  $ sbp parse --nd_sbp='S(0),B' --format=json     # OneFlow's NdSbp message
  $ sbp parse --nd_sbp='{"sbp_parallel":[{"broadcast_parallel":{}}]}'

Forms: SBP is B, P or S(<axis>) (axis >= 0); OneFlow's split(0), broadcast,
partial_sum (also as flow.sbp.split(0)) and DTensor's Shard(0), Replicate(),
Partial() are read too and printed as ours. An NdSbp is one SBP per mesh
axis, '(S(0), B)', 'S(0),B' or a list '[Shard(0), Replicate()]'. A placement is <cpu|cuda>:<ranks>[ [mesh]]
where ranks are numbers and lo-hi runs and the mesh's product is the rank
count. Ranks are ordered ascending, as OneFlow numbers devices.)help",
     ParseCmd},
    {"slices", "show the index range every rank holds of a tensor",
     "shape dtype placement nd_sbp format",
     "text|json|textproto", 0,
     R"help(sbp slices --shape=SHAPE --placement=PL --nd_sbp=ND [--dtype=DT]
           [--format=text|json|textproto]

For a logical tensor laid out as ND over PL, prints every rank's mesh
coordinate and the half-open index range it holds of each dim.

  $ sbp slices --shape=10,6 --placement='cpu:0-3 [2,2]' --nd_sbp='(S(0),S(1))'

Splits are balanced as in OneFlow: an extent d cut into n parts gives the
first d % n parts one extra element, and mesh axes apply in order to the
range already split (so (S(0),S(0)) on [2,2] cuts rows twice). B and P keep
the full range; P ranks hold addends. Extents smaller than the parts leave
some ranks with empty ranges, shown as "(empty)".)help",
     SlicesCmd},
    {"infer", "choose the SBP signature of one op call, and explain it",
     "op attr placement input constraint cost explain format request calibration",
     "text|json|textproto|table", 0,
     R"help(sbp infer --op=OP --placement=PL --input=TENSOR [--input=TENSOR ...]
          [--attr=NAME=VALUE ...] [--constraint=BN=ND ...] [--cost=oneflow|planned]
          [--explain] [--format=text|json|textproto|table] [--request=FILE|-]

Runs the engine on one op call: lists the op's candidate signatures, expands
them over the mesh, filters and ranks them as OneFlow does, and prints the
winner with every blob's layout and which inputs need boxing.

  $ sbp infer --op=matmul --attr=transpose_b=true --placement='cpu:0-3 [2,2]' \
      --input='f32[64,32]:(S(0),B)' --input='f32[48,32]:(B,S(0))'

TENSOR is <dtype>[<dims>]:<producer nd_sbp>, e.g. f32[64,32]:(S(0),B); on a
1-D placement S(0) may stand for (S(0)). Inputs go in the op's declared order
(`sbp ops OP`); to place optional inputs write NAME=TENSOR for every input
(e.g. --input=x=... --input=gamma=...). Attribute values: ints, floats,
true/false, comma lists (perm=1,0,2), strings. A constraint pins a blob's
layout (in-place ops): --constraint=a_0='(S(0),B)'.

--cost=oneflow (default) chooses exactly as OneFlow does. --cost=planned
prices each input's conversion by the cheapest real boxing plan (the plan
`sbp boxing` prints) and breaks ties by fewer boxed inputs; see
docs/BOXING.md.

--explain (or --format=table) lists every candidate with its order value,
copy cost and status (chosen, ranked, filtered_by_shape,
filtered_by_constraint). --request reads the same request as a protobuf
message (InferRequestProto in proto/infer.proto) in JSON or text format;
flags given with it override its fields.)help",
     InferCmd},
    {"boxing", "the cheapest exact plan from one layout to another",
     "shape dtype placement from to to_placement format execute nproc seed repeat calibration "
     "timeout heartbeat_timeout",
     "text|json|textproto|dot", 0,
     R"help(sbp boxing --shape=SHAPE --placement=PL --from=ND --to=ND [--dtype=DT]
           [--to_placement=PL] [--execute[=threads|gloo]] [--nproc=N] [--repeat=N]
           [--calibration=FILE] [--format=text|json|textproto|dot]

Plans the collectives that convert a tensor laid out as --from on --placement
into --to on --to_placement (default: the same placement), and prints every
step with its rank groups and the exact bytes each rank sends and receives.
--execute[=threads|gloo] also runs the plan on real ranks (threads of this
process, or Gloo processes it launches) with seeded integer-valued data,
checks the result against the full tensor, and prints every rank's measured
bytes next to the planned ones; it exits 1 on any difference. --repeat=N
then re-runs the checked plan N times on the same shards and reports each
run's time (the slowest rank's, from a barrier to its output): a timed
collective, e.g. --from=P --to=B on cpu:0-3 is an all-reduce.

  $ sbp boxing --shape=8,6 --placement='cpu:0-3 [2,2]' --from='(S(0),S(1))' --to='(S(1),S(0))'
  $ sbp boxing --shape=8,6 --placement=cpu:0-3 --from='S(0)' --to=B --to_placement=cpu:4-7
  $ sbp boxing ... --format=dot | dot -Tpng > plan.png

Moves: all-gather (S->B), reduce-scatter (P->S), all-reduce (P->B),
all-to-all (S->S), local slices (B->S, B->P, S->P) on one mesh axis or several
flattened, and exact point-to-point exchanges (also between placements).
Uneven splits move exactly the ranges ranks hold; nothing is padded. The
cost is latency + max per-rank bytes / bandwidth per step (defaults: 25 GB/s,
10 us per mesh axis). The report ends with the naive per-axis plan (DTensor's
order) for comparison.)help",
     BoxingCmd},
    {"plan", "choose every op's signature jointly over a whole program",
     "program mesh memory_cap training calibration format execute seed work_budget "
     "collectives_only dtensor_plan mesh_dim_names",
     "text|json|dot", 0,
     R"help(sbp plan --program=FILE.json [--mesh=2,2] [--memory_cap=BYTES] [--training]
          [--calibration=FILE] [--format=text|json|dot] [--execute [--seed=N]]
          [--work_budget=STEPS] [--collectives_only]
          [--dtensor_plan=PLAN.json [--mesh_dim_names=dp,tp]]

Reads a program (a placement, named tensors, ops in order; docs/PLANNING.md)
and chooses every op's N-D signature and every free tensor's layout jointly,
minimising communication (the boxing plans `sbp boxing` prints) plus compute
(matmul flops, other ops' bytes) per rank. It prints every op's signature,
the boxing on every edge, and totals beside those of the eager greedy choice
(op by op as `sbp infer` chooses, free tensors all-B).

  $ sbp plan --program=tests/testdata/plan_mlp.json
  $ sbp plan --program=model.json --mesh=2,4 --format=json
  $ sbp plan --program=model.json --format=dot | dot -Tsvg > plan.svg

A tensor listed with "nd_sbp" is a marked input and keeps its layout; one
without is free (a parameter). --mesh replaces the placement's hierarchy.
--calibration=FILE (as `sbp calibrate` writes it, optionally with
compute_flops_per_s and memory_bytes_per_s) prices links and compute.
--memory_cap bounds every rank's parameters plus activations.
--work_budget bounds the estimated boxing-planner steps spent pricing the
choices (default 2^28, a few seconds); a program over it (a large mesh) is
refused at once with RESOURCE_EXHAUSTED; raise it to wait longer, or pass
--collectives_only to price every boxing by its cheapest plan made of
collectives: no p2p exchange is priced (each costs ranks^2 steps), so a
program on 1,024 ranks prices in seconds, at the price of missing an
exchange that would have been cheaper (the report says so; not with
--execute). --training
(or "training": true in the program) plans the whole training step: the
forward, the backward ops autograd runs, each parameter's gradient
reduction and its Adam update, with the program's one output as the loss;
the report adds memory per rank split into parameters, gradients, optimizer
state and activations, and the strategy the plan amounts to (data
parallel, Megatron, ZeRO). The solver
eliminates chain and leaf ops exactly and enumerates what remains when it is
small (else local search from the greedy and all-B choices), so the plan is
never worse than greedy. JSON has total_time_s, greedy_total_time_s, tensors
by name with their nd_sbp, and ops with their nd_sbp_signature.

--execute runs the program twice on one thread per rank through the eager
interpreter, with seeded leaves: once with every op constrained to the
plan's signature, once op by op as eager inference chooses. It reports the
bytes each run moved next to the cost model's prediction and the largest
difference between the two runs' outputs, and exits 1 unless the bytes
are as predicted, eager inference made the predicted greedy choices, and
the outputs agree. With --training both runs are whole steps (forward,
backward ops, gradient reductions, Adam updates) and every parameter's
gradient and updated value must agree too.)help",
     PlanCmd},
    {"calibrate", "measure this machine's links for the planner",
     "backend nproc out format timeout heartbeat_timeout",
     "text|json|textproto", 0,
     R"help(sbp calibrate [--backend=threads|gloo] [--nproc=N] [--out=FILE]
              [--format=text|json|textproto]

Measures, on N real ranks (threads of this process, or N Gloo processes on
this machine), the latency of one collective step (a one-element all-reduce),
the bandwidth of the bytes a rank receives in an all-gather of 8 MiB per rank,
and point-to-point latency and bandwidth (ranks 0 and 1 ping-pong). Every
mesh axis gets the collective numbers. --out writes the calibration file;
--calibration=FILE makes `sbp boxing`, `sbp infer --cost=planned` and the
engine plan with it.

  $ sbp calibrate --nproc=4 --out=calib.txtpb
  $ sbp boxing --calibration=calib.txtpb --shape=1024,1024 ...)help",
     CalibrateCmd},
    {"launch", "run a program as N rank processes (torchrun style)",
     "nproc nproc_per_node nnodes node_rank master_addr master_port rank_prefix timeout "
     "heartbeat_timeout",
     "", -1,
     R"help(sbp launch --nproc=N [--nnodes=M --node_rank=K --master_addr=HOST
           --master_port=P] [--rank_prefix=auto|yes|no] -- COMMAND [ARGS...]

Starts N processes of COMMAND on this node with RANK, WORLD_SIZE, LOCAL_RANK,
LOCAL_WORLD_SIZE, MASTER_ADDR and MASTER_PORT set; each rank joins the Gloo
world from them. torchrun's --nproc_per_node is the same as --nproc (N >= 1).
If a rank fails, the others are terminated and the error names it (exit 1);
a count below 1, counts that disagree or no COMMAND are exit 2. On
several nodes run the same command on each with its --node_rank and a
common --master_addr/--master_port. A COMMAND `sbp` runs this sbp binary.
--rank_prefix starts every line a rank prints with [rank N]: auto (the
default) does so when stdout is a terminal. Every rank gets a fresh job
secret in OFS_JOB_SECRET (or this shell's, which several nodes must share).
--timeout=SECONDS sets the ranks' collective timeout (OFS_TIMEOUT, default
60) and --heartbeat_timeout=SECONDS how long a silent rank goes unreported
(OFS_HEARTBEAT_TIMEOUT, default 10; 0 off); demo, boxing --execute and
calibrate take both too.

  $ sbp launch --nproc=4 -- sbp boxing --execute=gloo --shape=8,6 \
        --placement='cpu:0-3 [2,2]' --from='(S(0),S(1))' --to='(B,B)')help",
     LaunchCmd},
    {"demo", "train a LLaMA-style block on a mesh, checked against one rank",
     "mesh backend batch seq hidden heads ffn vocab layers steps trace seed all_ops record save resume cost device calibration format timeout heartbeat_timeout",
     "text|json", 0,
     R"help(sbp demo [--mesh=2,2] [--backend=threads|gloo] [--steps=3] [--layers=1]
         [--batch=4] [--seq=16] [--hidden=64] [--heads=4] [--ffn=128] [--vocab=128]
         [--trace=FILE.json] [--record=PROGRAM.json] [--all_ops] [--cost=oneflow|planned]
         [--device=cpu|cuda] [--seed=N] [--calibration=FILE] [--format=text|json]
         [--save=DIR] [--resume=DIR]

Trains a LLaMA-style decoder (RMSNorm, attention with rotary embedding and
causal scaled dot-product attention, SwiGLU MLP, residual adds, and a
cross-entropy over a vocabulary projection) for a few steps of forward,
backward and Adam, on a mesh of real ranks: threads (default) or Gloo
processes. Only inputs and weights are marked: data parallel on mesh axis 0,
Megatron column/row-parallel weights on axis 1. Prints every op of step 0
with the signature the engine chose and the boxing it inserted (planned and
measured bytes), the collectives over the run, and the loss per step; checks
the loss and every gradient against a single-rank run and exits 1 on a
mismatch or if the loss does not go down. --trace writes a Chrome
trace-event timeline per rank (ui.perfetto.dev). --record writes step 0's
training step as a program for `sbp plan` ("training": true: the forward
with the loss as output; plan expands backward, gradient reductions and
Adam updates) with the weights free, and a PROGRAM.marked.json twin with
the Megatron marking fixed (weights flagged "parameter"), to compare.
--cost=planned makes every op's choice by the cheapest real boxing plan
instead of OneFlow's copy-cost formulas (see `sbp help infer`).
--device=cuda runs the ranks' kernels on the GPU, every rank thread sharing
the current GPU and boxing on device memory (threads only; needs a
--config=cuda build and a GPU); the single-rank reference stays on the CPU,
so the check also compares the CUDA kernels with the CPU ones.
--save=DIR writes a checkpoint after the last step (weights, Adam state,
step count and seed; docs/CHECKPOINTS.md); --resume=DIR continues from one
saved on any mesh, its tensors resharded onto this one (the reference
resumes from it on one rank). Three steps saved on [2,2] and three resumed
on [4] give the losses of six steps in one run.

The header is printed at once and a line per step as training runs.
--format=json prints one object instead: placement, backend, cost_policy,
losses, reference_losses, collectives (steps and bytes per kind),
check (passed, loss and gradient errors) and ops (step 0's signatures and
boxing).)help",
     DemoCmd},
    {"verify", "prove every op's SBP rule right by running its kernel",
     "op mesh seed device format",
     "text|json", 0,
     R"help(sbp verify [--op=OP[,OP...]] [--mesh=2,3] [--device=cpu|cuda] [--seed=N]
                [--format=text|json]

The soundness verifier. For every registered op (or --op), draws seeded
inputs with uneven and size-1 extents (indices in range, masks bool; the
per-op input recipes are in kernels/verify/input_recipes.cc), runs the
CPU kernel on one rank for the reference, then under every candidate
signature on in-process ranks (threads): every 1-D candidate on [2] and
[3], every N-D candidate the engine keeps on [2,2] and [2,3], and a seeded
sample of 8 per op on [2,2,2]. Each rank gets its shard of the inputs (P
as integer addends), the outputs are assembled (P summed) and compared
with the reference in f64 (tolerance per dtype: f32 1e-5, f64 1e-9, f16
2e-3, bf16 1.6e-2, relative and absolute; integers exact).

  $ sbp verify --op=matmul
  $ sbp verify --mesh=2,3 --format=json
  $ sbp verify                       # the whole catalog

Prints per op the candidates checked and every failure (mesh, candidate
signature, blob, max error); ops without a CPU kernel or without a valid
input recipe are listed apart. Exits 1 on any failure or gap, and on a
bad value (unknown op, bad mesh or device); 2 on a wrong command line. --mesh checks that one mesh only (a
1-D mesh its 1-D candidates, an N-D mesh all kept N-D candidates, at most
16 ranks).

--device=cuda checks the CUDA kernels instead: the reference stays the
CPU kernel on one rank, and every candidate's shards are copied to the
GPU, run through the op's CUDA kernel and copied back to be assembled and
compared. Ops without a CUDA kernel (or whose CUDA kernel lacks the
recipe's dtype) are listed as "no cuda kernel", apart from failures, and
do not make the exit status 1. It needs a build with `bazel build
--config=cuda //cli:sbp`; the default build exits 1 saying so, and a
machine without a GPU exits 1 with "no CUDA device". See docs/KERNELS.md
and docs/GPU.md.)help",
     VerifyCmd},
    {"tour", "a short tour of inference on built-in examples",
     "",
     "", 0,
     R"help(sbp tour

Runs a few fixed examples of the other commands and prints them with their
command lines: layouts, exact uneven slices, and signature inference.)help",
     TourCmd},
    {"embed", "sentence embeddings from a BERT encoder loaded sharded onto a mesh",
     "model placement format repeat", "text|json", -1,
     R"help(sbp embed --model=DIR [--placement='cpu:0-3 [2,2]'] [--format=text|json] [--repeat=N] TEXT...

Loads a BERT sentence encoder (all-MiniLM-L6-v2: `tools/fetch_model.sh`
prints its directory) from DIR's config.json, vocab.txt and
model.safetensors, each rank reading only its slice of every weight:
texts split across mesh axis 0, the weights tensor parallel on axis 1
(heads and the FFN; on a 1-axis mesh, tensor parallel only). Tokenizes with
BERT's WordPiece, runs the encoder, mean-pools over the real tokens and
L2-normalises, as sentence-transformers does. Prints one unit vector per
text (text: the first and last values; json: all of them) and, for several
texts, their cosine similarities. --repeat=N (1 to 1000) embeds the texts
N times on the weights loaded once, timing each run (tokenization, the
forward pass, gathering the vectors): for benchmarks
(tools/bench/embed_vs_torch.py). JSON: {"model", "dim", "placement",
"texts", "tokens", "embeddings", "load_seconds", "embed_seconds" (the
first run), "run_seconds" and "run_cpu_seconds" (per run: wall, and CPU of
every rank thread), "weight_bytes_read" (per rank)}.)help",
     EmbedCmd},
    {"ckpt", "inspect a checkpoint, or export it as one safetensors file",
     "", "", 3,
     R"help(sbp ckpt inspect DIR
sbp ckpt export DIR OUT.safetensors

A checkpoint is a directory of safetensors shard files and an index.json
(docs/CHECKPOINTS.md), written by `sbp demo --save=DIR` or by
oneflow_sbp.checkpoint.save. `inspect` lists every tensor with its dtype,
shape, the layout and placement it was saved from, and its pieces: file,
key, region of the logical tensor, bytes and CRC-32C. `export` verifies
every piece and writes one file with every tensor whole, which any
safetensors reader loads. DIR may also be a plain .safetensors file.)help",
     CkptCmd},
    {"import", "an ONNX model as a program `sbp plan` reads, and its weights",
     "out placement dims", "text|json", 1,
     R"help(sbp import MODEL.onnx --out=DIR [--placement=PL] [--dims=NAME=N,...]
           [--format=text|json]

Reads an ONNX model (opsets 13 to 21) and writes DIR/program.json, the
program format `sbp plan --program` reads: the graph inputs as tensors
replicated on --placement (default cpu:0; `sbp plan --mesh` reshapes it),
the initializers as free tensors named by initializer (the planner chooses
their layouts), the graph outputs by name; and DIR/weights.safetensors
with the initializers' values (none for a model saved without weights).
Each node maps to a catalog op or a short composition (Gemm: matmul, then
broadcast_add of the bias); docs/IMPORT.md lists them. A node that does
not map, a truncated file, an opset outside 13..21, a weight file that is
missing and a symbolic dimension without --dims are errors (exit 1) naming
the node, op and file.

  $ sbp import mlp.onnx --out=/tmp/mlp
  $ sbp plan --program=/tmp/mlp/program.json --mesh=2,2)help",
     ImportCmd},
    {"run", "run a program (an imported model) on a mesh with its weights",
     "program weights inputs out placement plan backend expect rtol timeout", "text", 0,
     R"help(sbp run --program=DIR/program.json --weights=DIR/weights.safetensors
        --inputs=IN.safetensors [--out=OUT.safetensors] [--placement=PL]
        [--plan=PLAN.json] [--backend=threads|gloo] [--expect=REF.safetensors [--rtol=1e-5]]

Runs the program on every rank of --placement (default: the program's),
its weights read by name from --weights and its inputs (marked tensors the
weights do not hold) by name or position (input_0, input_1, ...) from
--inputs; a missing value, or one of another shape or dtype, is an error
naming the tensor. The ops run as the planner chooses (sbp plan), or, with
--plan, with the parameters laid out as that DTensor plan says (sbp plan
--dtensor_plan) and each op choosing as eager inference does. The outputs
go to --out as output_0, ... and by name; --expect compares them with a
reference and exits 1 past --rtol.

  $ sbp import tests/testdata/models/mlp.onnx --out=/tmp/mlp
  $ sbp run --program=/tmp/mlp/program.json --weights=/tmp/mlp/weights.safetensors \
        --inputs=tests/testdata/models/mlp.io.safetensors --placement='cpu:0-3 [2,2]' \
        --expect=tests/testdata/models/mlp.io.safetensors)help",
     RunCmd},
    {"ops", "list the registered ops, their args and attributes",
     "format",
     "text|json|textproto", 1,
     R"help(sbp ops [OP] [--format=text|json|textproto]

Without OP, one line per op: inputs -> outputs and attributes with defaults.
'?' marks optional args, '...' variadic ones, and '!' ops that have no SBP
rule and only ever broadcast. With OP, that op in detail, and where its
record is (ops/records/<family>.toml: whether the op and its list are
OneFlow's, its kernels, its backward, its Paddle names).)help",
     OpsCmd},
};

}  // namespace

absl::Span<const CommandSpec> Commands() { return kCommands; }

const CommandSpec* FindCommandSpec(absl::string_view name) {
  for (const CommandSpec& c : kCommands) {
    if (name == c.name) return &c;
  }
  return nullptr;
}

}  // namespace oneflow_sbp::cli
