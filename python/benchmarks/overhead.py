#!/usr/bin/env python3
"""Per-op overhead of the Python layer: relu on f32[8,8] laid out (S(0), B)
on a [2,2] mesh of 4 rank threads, signature cached, next to the same loop
driven from C++ through the same controller (Session.time_cpp_apply), in
the same run. Each figure is the median of --repeats rounds of --iters calls,
rounds interleaved so that both paths see the same machine.

Also the cost of one call through pybind11 with no engine work behind it:
a property read (``Tensor.requires_grad``) and a trivial method
(``Tensor._same(x)``), each less an empty Python call (the loop's own cost,
printed too), the floor under every native call. These are the fastest of
many short samples of 1,000 calls (timeit's convention: other processes
can only slow such a sample down, and one of about a millisecond often
runs undisturbed even on a loaded machine).

DTensor needs one process per rank, so a same-run DTensor figure would
come from a separate multi-process harness; without torch installed (as
here) the script says so.

    bazel run //python:overhead_benchmark -- --iters=2000 --repeats=7
"""
import argparse
import os
import statistics
import sys
import time

# Under `bazel run` the built package sits next to this folder.
_HERE = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
if os.path.exists(os.path.join(_HERE, "oneflow_sbp", "_C.so")):
    sys.path.insert(0, _HERE)

import numpy as np

import oneflow_sbp as ofs
from oneflow_sbp import sbp


def per_call(fn, iters):
    start = time.perf_counter()
    for _ in range(iters):
        fn()
    return (time.perf_counter() - start) / iters


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--iters", type=int, default=2000)
    ap.add_argument("--repeats", type=int, default=7)
    a = ap.parse_args()
    s = ofs.init(world_size=4)
    p = ofs.placement("cpu", ranks=[[0, 1], [2, 3]])
    x = ofs.tensor(np.arange(64, dtype=np.float32).reshape(8, 8) - 32, placement=p,
                   sbp=[sbp.split(0), sbp.broadcast])
    apply = s.apply
    rows = {"C++ Apply through the controller": [], "Python: Session.apply (native call)": [],
            "Python: oneflow_sbp.relu(x)": []}
    for fn in (lambda: ofs.relu(x), lambda: apply("relu", [x], {})):
        per_call(fn, 200)  # warm: signature and kernel cached
    binding = {"empty Python call (the loop's floor)": lambda: None,
               "pybind11 property read (x.requires_grad)": lambda: x.requires_grad,
               "pybind11 method call (x._same(x))": lambda: x._same(x)}
    floors = {k: [] for k in binding}
    for _ in range(a.repeats):
        rows["C++ Apply through the controller"].append(s.time_cpp_apply(x, "relu", a.iters))
        rows["Python: Session.apply (native call)"].append(
            per_call(lambda: apply("relu", [x], {}), a.iters))
        rows["Python: oneflow_sbp.relu(x)"].append(per_call(lambda: ofs.relu(x), a.iters))
        for k, fn in binding.items():
            floors[k] += [per_call(fn, 1000) for _ in range(50)]
    med = {k: statistics.median(v) * 1e6 for k, v in rows.items()}
    base = med["C++ Apply through the controller"]
    print(f"relu f32[8,8] (S(0), B) on cpu:0-3 [2,2], 4 rank threads, "
          f"median of {a.repeats} x {a.iters} calls")
    for k, v in med.items():
        extra = "" if k.startswith("C++") else f"   (+{v - base:.2f} us over C++)"
        print(f"  {k:<40} {v:8.2f} us/op{extra}")
    floor = {k: min(v) * 1e6 for k, v in floors.items()}
    empty = floor.pop("empty Python call (the loop's floor)")
    print(f"one call through pybind11, fastest of {a.repeats * 50} samples of 1000 calls, "
          f"less an empty Python call ({empty:.3f} us)")
    for k, v in floor.items():
        print(f"  {k:<40} {v - empty:8.3f} us/call")
    try:
        import torch  # noqa: F401 (never required)
    except ImportError:
        print("  torch not installed: no DTensor figure")
    ofs.shutdown()


if __name__ == "__main__":
    main()
