#!/usr/bin/env python3
"""Our collectives and eager dispatch side by side with PyTorch's, in one run.

What it measures (every figure in interleaved rounds, reported as min /
median over all timed runs of all rounds):

* Collectives on 4 ranks, at 1 MiB and 64 MiB: all-gather, reduce-scatter,
  all-reduce and all-to-all of f32 data, by
    - torch.distributed with its Gloo backend (4 processes);
    - our Gloo backend (4 processes; `sbp boxing --execute=gloo --repeat`);
    - our in-process backend (4 rank threads; `--execute=threads`);
    - a single-thread memcpy of the same bytes (numpy.copyto), the scale.
  Size N is the logical tensor: the full buffer each rank ends with after
  an all-gather or all-reduce, or starts with before a reduce-scatter
  (partial sums), and for all-to-all the whole tensor, each rank holding
  N/4 before and after. GB/s = N / seconds (1 GB = 1e9 bytes) for every
  column, so a row's columns compare directly. A run is timed on every
  rank from leaving a barrier to holding its output; the slowest rank's
  time counts. Our first (cold, verified) run and torch's first call per
  round are not timed.
* Eager overhead per op on f32[8,8] laid out (S(0), B) on a [2,2] mesh
  (the other operand of add is the same tensor; mm's right operand is
  (B, B)): relu, add and mm, by DTensor (4 Gloo processes, mesh [2,2],
  each rank timing its own loop; the slowest rank counts) and ours (4
  rank threads driven by one controller, so one op call is the work of
  all 4 ranks): the C++ layer (`Session.time_cpp_apply`, eager::Apply on
  every rank through the rank driver) and the Python layer (the public
  functions `oneflow_sbp.relu`, `.add`, `.matmul`). No collective runs
  in any of these ops.

How to run it (from the repository root; never a test, it needs torch):

    bazel build //cli:sbp //python:package
    /root/refvenv/bin/python tools/bench/peers.py            # a table
    /root/refvenv/bin/python tools/bench/peers.py --json     # one JSON object

It needs: a python3 that imports torch (with Gloo) and numpy, of the same
CPython version the `_C.so` module was built for (bazel-bin's module with
the sources under python/, or --package_dir); the `sbp` tool (bazel-bin/cli/sbp,
or --sbp). Without torch it says so and exits 1. A full run (3 rounds)
took 481 s on a 2-vCPU machine at load average 11-18; most of it is
outside the timed regions: torch's start-up in 4 processes, and per case
and round one `sbp boxing` run that seeds the source shards and checks the
result of its first run (a 64 MiB all-reduce over Gloo: 23 s wall there
for 8 s of timed runs). --rounds=1 --repeat=3 cuts it to about a third.

`--json` prints one object: "collectives" -> name -> "1MiB"/"64MiB" ->
{torch_gbps, ours_gloo_gbps, ours_threads_gbps, memcpy_gbps (at the median
time), and each side's min_ms / median_ms}; "ops" -> relu/add/mm ->
{dtensor_us, ours_us (our Python layer, what a user calls), ours_cpp_us};
"machine" (load average before and after, CPU, torch version).
"""
import argparse
import importlib.util
import json
import os
import platform
import shutil
import socket
import statistics
import subprocess
import sys
import tempfile
import time

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
SIZES = {"1MiB": 1 << 20, "64MiB": 64 << 20}
# Our side of each collective: the boxing of a tensor on cpu:0-3 that is
# exactly that one collective.
OURS = {
    "all_gather": ("S(0)", "B"),
    "reduce_scatter": ("P", "S(0)"),
    "all_reduce": ("P", "B"),
    "all_to_all": ("S(0)", "S(1)"),
}
OPS = ("relu", "add", "mm")


def shape_of(nbytes):
    """A square-ish f32 shape of exactly nbytes (a power of 4 elements)."""
    elems = nbytes // 4
    rows = 1 << ((elems.bit_length() - 1) // 2)
    return rows, elems // rows


# ----------------------------------------------------------------------------
# torch side: 4 worker processes that stay up for the whole run; rank 0
# reads one command line per round from stdin and answers with one JSON line.

def torch_worker(args):
    import torch
    import torch.distributed as dist
    from datetime import timedelta
    torch.set_num_threads(1)
    dist.init_process_group("gloo", timeout=timedelta(seconds=600))
    rank, n = dist.get_rank(), dist.get_world_size()
    from torch.distributed.tensor import Replicate, Shard, distribute_tensor, init_device_mesh
    mesh = init_device_mesh("cpu", (2, 2))
    gen = torch.Generator().manual_seed(0)
    x = distribute_tensor(torch.randn(8, 8, generator=gen), mesh, [Shard(0), Replicate()])
    w = distribute_tensor(torch.randn(8, 8, generator=gen), mesh, [Replicate(), Replicate()])
    op_fns = {"relu": lambda: torch.relu(x), "add": lambda: x + x, "mm": lambda: torch.mm(x, w)}

    buffers = {}
    for size, nbytes in SIZES.items():
        e = nbytes // 4
        buffers[size] = {
            "all_gather": (torch.ones(e // n), torch.empty(e)),
            "reduce_scatter": (torch.ones(e), torch.empty(e // n)),
            "all_reduce": (torch.ones(e), None),
            "all_to_all": (torch.ones(e // n), torch.empty(e // n)),
        }

    def run(name, size):
        a, b = buffers[size][name]
        if name == "all_gather":
            dist.all_gather_into_tensor(b, a)
        elif name == "reduce_scatter":
            dist.reduce_scatter_tensor(b, a)
        elif name == "all_reduce":
            dist.all_reduce(a)
        else:
            dist.all_to_all_single(b, a)

    def slowest(local):
        t = torch.tensor(local, dtype=torch.float64)
        dist.all_reduce(t, op=dist.ReduceOp.MAX)
        return t.tolist()

    flag = torch.zeros(1)
    while True:
        if rank == 0:
            line = sys.stdin.readline()
            flag[0] = 1 if line.strip() == "round" else 0
        dist.broadcast(flag, 0)
        if flag[0] == 0:
            break
        result = {"collectives": {}, "ops": {}}
        for name in OURS:
            for size in SIZES:
                run(name, size)  # warm: not timed
                times = []
                for _ in range(args.repeat):
                    dist.barrier()
                    t0 = time.perf_counter()
                    run(name, size)
                    times.append(time.perf_counter() - t0)
                result["collectives"][f"{name}/{size}"] = slowest(times)
        for op in OPS:
            fn = op_fns[op]
            for _ in range(50):
                fn()
            dist.barrier()
            t0 = time.perf_counter()
            for _ in range(args.iters):
                fn()
            result["ops"][op] = slowest([(time.perf_counter() - t0) / args.iters])[0]
        if rank == 0:
            print(json.dumps(result), flush=True)
    dist.destroy_process_group()


class TorchWorkers:
    def __init__(self, args):
        with socket.socket() as s:
            s.bind(("127.0.0.1", 0))
            port = s.getsockname()[1]
        self.procs = []
        cmd = [sys.executable, os.path.abspath(__file__), "--_torch_worker",
               f"--repeat={args.repeat}", f"--iters={args.iters}"]
        for r in range(4):
            env = dict(os.environ, RANK=str(r), WORLD_SIZE="4", LOCAL_RANK=str(r),
                       MASTER_ADDR="127.0.0.1", MASTER_PORT=str(port), OMP_NUM_THREADS="1")
            self.procs.append(subprocess.Popen(
                cmd, env=env, text=True, stdin=subprocess.PIPE if r == 0 else subprocess.DEVNULL,
                stdout=subprocess.PIPE if r == 0 else subprocess.DEVNULL))

    def round(self):
        p = self.procs[0]
        p.stdin.write("round\n")
        p.stdin.flush()
        line = p.stdout.readline()
        if not line:
            self.close()
            raise RuntimeError("torch workers died (see their stderr above)")
        return json.loads(line)

    def close(self):
        p = self.procs[0]
        if p.poll() is None:
            try:
                p.stdin.write("stop\n")
                p.stdin.flush()
            except BrokenPipeError:
                pass
        for q in self.procs:
            try:
                q.wait(timeout=60)
            except subprocess.TimeoutExpired:
                q.kill()


# ----------------------------------------------------------------------------
# our side

def ours_collective(sbp, backend, name, nbytes, repeat):
    rows, cols = shape_of(nbytes)
    src, dst = OURS[name]
    cmd = [sbp, "boxing", f"--shape={rows},{cols}", "--dtype=f32", "--placement=cpu:0-3",
           f"--from={src}", f"--to={dst}", f"--execute={backend}", "--nproc=4",
           f"--repeat={repeat}", "--format=json"]
    out = subprocess.run(cmd, capture_output=True, text=True, timeout=300)
    if out.returncode != 0:
        raise RuntimeError(f"{' '.join(cmd)} exited {out.returncode}: {out.stderr[-2000:]}")
    plan = json.loads(out.stdout)
    steps = [s["kind"] for s in plan["steps"]]
    if steps != [name]:
        raise RuntimeError(f"{name}: our plan is {steps}, not the one collective")
    ex = plan["execution"]
    if not ex.get("verified"):
        raise RuntimeError(f"{name} over {backend}: result or bytes differ from the plan")
    return ex["repeatS"] if "repeatS" in ex else ex["repeat_s"]


def memcpy_times(nbytes, repeat):
    import numpy as np
    src = np.ones(nbytes, dtype=np.uint8)
    dst = np.empty_like(src)
    np.copyto(dst, src)
    times = []
    for _ in range(repeat):
        t0 = time.perf_counter()
        np.copyto(dst, src)
        times.append(time.perf_counter() - t0)
    return times


def ours_ops(package_dir, iters):
    if package_dir not in sys.path:
        sys.path.insert(0, package_dir)
    import numpy as np
    import oneflow_sbp as ofs
    from oneflow_sbp import Replicate, Shard
    s = ofs.init(world_size=4)
    p = ofs.placement("cpu", ranks=[[0, 1], [2, 3]])
    rng = np.random.default_rng(0)
    x = ofs.tensor(rng.standard_normal((8, 8)).astype(np.float32), placement=p,
                   sbp=[Shard(0), Replicate()])
    w = ofs.tensor(rng.standard_normal((8, 8)).astype(np.float32), placement=p,
                   sbp=[Replicate(), Replicate()])
    py = {"relu": lambda: ofs.relu(x), "add": lambda: ofs.add(x, x),
          "mm": lambda: ofs.matmul(x, w)}
    cpp = {"relu": ([x], "relu"), "add": ([x, x], "broadcast_add"), "mm": ([x, w], "matmul")}
    result = {}
    for op in OPS:
        fn = py[op]
        for _ in range(50):
            fn()
        t0 = time.perf_counter()
        for _ in range(iters):
            fn()
        py_s = (time.perf_counter() - t0) / iters
        cpp_s = s.time_cpp_apply(cpp[op][0], cpp[op][1], iters)
        result[op] = {"py": py_s, "cpp": cpp_s}
    ofs.shutdown()
    return result


# ----------------------------------------------------------------------------

def summary(times):
    return min(times), statistics.median(times)


def machine():
    model = platform.processor()
    try:
        with open("/proc/cpuinfo") as f:
            for line in f:
                if line.startswith("model name"):
                    model = line.split(":", 1)[1].strip()
                    break
    except OSError:
        pass
    return {"cpu": model, "cores": os.cpu_count(), "load_before": os.getloadavg()}


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--json", action="store_true", help="print one JSON object")
    ap.add_argument("--rounds", type=int, default=3)
    ap.add_argument("--repeat", type=int, default=5, help="timed runs per collective per round")
    ap.add_argument("--iters", type=int, default=500, help="op calls per eager timing")
    ap.add_argument("--sbp", default=os.path.join(ROOT, "bazel-bin", "tools", "sbp"))
    ap.add_argument("--package_dir", default=None,
                    help="a folder holding oneflow_sbp/ with its _C.so (default: the sources "
                         "under python/ with bazel-bin's _C.so, assembled in a temporary folder)")
    ap.add_argument("--_torch_worker", action="store_true", help=argparse.SUPPRESS)
    args = ap.parse_args()
    if args._torch_worker:
        torch_worker(args)
        return 0
    if importlib.util.find_spec("torch") is None:
        print("peers.py: torch is not importable by this python; run it with one that has "
              "torch (e.g. /root/refvenv/bin/python)", file=sys.stderr)
        return 1
    built = os.path.join(ROOT, "bazel-bin", "python", "oneflow_sbp", "_C.so")
    for path, what in ((args.sbp, "the sbp tool (bazel build //cli:sbp)"),
                       (os.path.join(args.package_dir, "oneflow_sbp", "_C.so")
                        if args.package_dir else built,
                        "the Python module (bazel build //python:package)")):
        if not os.path.exists(path):
            print(f"peers.py: {path} missing: {what}", file=sys.stderr)
            return 1
    if args.package_dir is None:
        # bazel-bin holds the module, python/ the pure-Python front.
        args.package_dir = tempfile.mkdtemp(prefix="peers_pkg_")
        shutil.copytree(os.path.join(ROOT, "python", "oneflow_sbp"),
                        os.path.join(args.package_dir, "oneflow_sbp"),
                        ignore=shutil.ignore_patterns("__pycache__"))
        shutil.copy(built, os.path.join(args.package_dir, "oneflow_sbp", "_C.so"))
    import torch  # noqa: F401 (the version only; the workers use it)
    info = machine()
    info["torch"] = torch.__version__
    info["date_utc"] = time.strftime("%Y-%m-%d %H:%M", time.gmtime())
    started = time.time()
    workers = TorchWorkers(args)
    samples = {}  # (name, size, side) -> [seconds]
    op_samples = {}  # (op, side) -> [seconds per call]

    def add(key, values, table=samples):
        table.setdefault(key, []).extend(values)

    try:
        for r in range(args.rounds):
            # Interleaved: torch, then ours over Gloo, ours in process and a
            # memcpy per case, then our eager ops; the same order each round.
            t = workers.round()
            for key, values in t["collectives"].items():
                name, size = key.split("/")
                add((name, size, "torch"), values)
            for op, v in t["ops"].items():
                add((op, "dtensor"), [v], op_samples)
            for name in OURS:
                for size, nbytes in SIZES.items():
                    add((name, size, "ours_gloo"),
                        ours_collective(args.sbp, "gloo", name, nbytes, args.repeat))
                    add((name, size, "ours_threads"),
                        ours_collective(args.sbp, "threads", name, nbytes, args.repeat))
                    add((name, size, "memcpy"), memcpy_times(nbytes, args.repeat))
            for op, v in ours_ops(args.package_dir, args.iters).items():
                add((op, "ours_py"), [v["py"]], op_samples)
                add((op, "ours_cpp"), [v["cpp"]], op_samples)
            if not args.json:
                print(f"round {r + 1}/{args.rounds} done ({time.time() - started:.0f} s)",
                      file=sys.stderr)
    finally:
        workers.close()
    info["load_after"] = os.getloadavg()
    info["wall_s"] = round(time.time() - started, 1)

    out = {"machine": info, "rounds": args.rounds, "repeat": args.repeat,
           "gbps": "N / seconds, N the logical tensor (1 GB = 1e9 B)",
           "collectives": {}, "ops": {}}
    for name in OURS:
        out["collectives"][name] = {}
        for size, nbytes in SIZES.items():
            row = {}
            for side in ("torch", "ours_gloo", "ours_threads", "memcpy"):
                lo, med = summary(samples[(name, size, side)])
                row[f"{side}_gbps"] = round(nbytes / med / 1e9, 3)
                row[f"{side}_min_ms"] = round(lo * 1e3, 3)
                row[f"{side}_median_ms"] = round(med * 1e3, 3)
            out["collectives"][name][size] = row
    for op in OPS:
        row = {}
        for side, key in (("dtensor", "dtensor_us"), ("ours_py", "ours_us"),
                          ("ours_cpp", "ours_cpp_us")):
            lo, med = summary(op_samples[(op, side)])
            row[key] = round(med * 1e6, 2)
            row[key.replace("_us", "_min_us")] = round(lo * 1e6, 2)
        out["ops"][op] = row
    if args.json:
        print(json.dumps(out, indent=1))
        return 0
    print_tables(out)
    return 0


def print_tables(out):
    m = out["machine"]
    print(f"{m['date_utc']} UTC, {m['cpu']}, {m['cores']} cores, torch {m['torch']}, load "
          f"{m['load_before'][0]:.2f} -> {m['load_after'][0]:.2f}, {out['rounds']} rounds x "
          f"{out['repeat']} runs, {m['wall_s']} s")
    print("\nCollectives on 4 ranks: GB/s at the median time (min-time GB/s in brackets); "
          "GB/s = N / s")
    head = ("collective", "N", "torch+gloo", "ours gloo", "ours threads", "memcpy",
            "gloo/torch", "threads/memcpy")
    print("| " + " | ".join(head) + " |")
    print("|" + " --- |" * len(head))
    for name, sizes in out["collectives"].items():
        for size, r in sizes.items():
            n = SIZES[size]

            def cell(side):
                return f"{r[side + '_gbps']:.2f} ({n / r[side + '_min_ms'] / 1e6:.2f})"
            print(f"| {name} | {size} | {cell('torch')} | {cell('ours_gloo')} | "
                  f"{cell('ours_threads')} | {cell('memcpy')} | "
                  f"{r['ours_gloo_gbps'] / r['torch_gbps']:.2f}x | "
                  f"{r['ours_threads_gbps'] / r['memcpy_gbps']:.2f} |")
    print("\nEager overhead per op, f32[8,8] (S(0), B) on [2,2]: us per call, median (min)")
    head = ("op", "DTensor", "ours Python", "ours C++", "DTensor/ours Python", "DTensor/ours C++")
    print("| " + " | ".join(head) + " |")
    print("|" + " --- |" * len(head))
    for op, r in out["ops"].items():
        print(f"| {op} | {r['dtensor_us']:.1f} ({r['dtensor_min_us']:.1f}) | "
              f"{r['ours_us']:.1f} ({r['ours_min_us']:.1f}) | "
              f"{r['ours_cpp_us']:.1f} ({r['ours_cpp_min_us']:.1f}) | "
              f"{r['dtensor_us'] / r['ours_us']:.1f}x | {r['dtensor_us'] / r['ours_cpp_us']:.1f}x |")


if __name__ == "__main__":
    sys.exit(main())
