#!/usr/bin/env python3
"""The layering check (docs/ARCHITECTURE.md): every #include of project code
points down or sideways, never up a layer, and the folder graph has no
cycle. Run from the repository root; exit 1 naming each violation.

Layers, bottom up; a folder's layer is that of its longest listed prefix.
Tests, fuzzers and the documentation's examples stand on top and may
include anything.

Two more rules: the device kernel folders (ops/kernels/cpu, ops/kernels/cuda)
never include each other, but for the device-neutral headers still in
ops/kernels/cpu that are listed below until they move (an include of any
other header, or a listed one no longer included, is a problem); and the
Python package's modules import down their own layers (PY_LAYERS).
"""
import os
import re
import sys

LAYERS = [
    # (layer, name, folders)
    (0, "messages", ["proto"]),
    (1, "values and inference", ["oneflow_sbp", "oneflow_sbp/cuda"]),
    (2, "op rules", ["ops"]),
    (3, "boxing planner", ["boxing"]),
    (4, "runtime", ["runtime", "runtime/comm", "ops/kernels", "ops/kernels/cpu",
                    "ops/kernels/cuda", "ops/kernels/verify"]),
    (5, "engine facade", ["engine"]),
    (6, "eager and graph", ["eager", "graph"]),
    (7, "fronts", ["io", "tools", "tools/bench", "tools/gpu", "python", "python/native"]),
    (9, "tests", ["tests", "fuzz", "docs/examples"]),
]
# The device-neutral headers that ops/kernels/cuda still includes from
# ops/kernels/cpu (argument parsing, layouts, index arithmetic): the
# sideways includes allowed until they move to a neutral folder (issue 33).
DEVICE_FOLDERS = ("ops/kernels/cpu", "ops/kernels/cuda")
NEUTRAL_IN_CPU = {
    "attention_layout.h", "broadcast_loop.h", "concat_slice_kernels.h", "conv_args.h",
    "conv_geometry.h", "cross_entropy_args.h", "dropout_args.h", "encoder_args.h",
    "index_args.h", "int_arith.h", "matmul_plan.h", "norm_layout.h", "reduce_args.h",
    "same_operands.h", "scalar_args.h", "select_args.h", "view_kernels.h",
}
# The Python package's modules, bottom up; a module imports only its own
# layer or below (the native module _C is the bottom).
PY_PACKAGE = "python/oneflow_sbp"
PY_LAYERS = [
    (0, "native module", ["_C"]),
    (1, "values and the session", ["sbp", "placement", "random", "session"]),
    (2, "rules", ["rules", "spmd_rules", "custom_op"]),
    (3, "global tensors", ["tensor", "checkpoint"]),
    (4, "op functions, optimizers, nn", ["ops", "optim", "nn", "nn.functional"]),
    (5, "the package", ["__init__", "nn.__init__"]),
]
PY_IMPORT = re.compile(r"^\s*from\s+(\.+)([\w.]*)\s+import\s+([\w, ()*]+)|^\s*import\s+oneflow_sbp\.([\w.]+)", re.M)
SOURCE = re.compile(r"\.(h|cc|cu|cuh)$")
INCLUDE = re.compile(r'^\s*#\s*include\s+"([^"]+)"', re.M)
SKIP = ("bazel-", ".git", "third_party")


def layer_of(folder):
    best = None
    for layer, name, folders in LAYERS:
        for f in folders:
            if folder == f and (best is None or len(f) > len(best[2])):
                best = (layer, name, f)
    return best


def py_layer_of(module):
    for layer, name, modules in PY_LAYERS:
        if module in modules:
            return layer, name
    return None


def python_problems():
    """Imports between the package's modules that point up a layer."""
    problems, count = [], 0
    for root, _, files in os.walk(PY_PACKAGE):
        for f in sorted(files):
            if not f.endswith(".py"):
                continue
            rel = os.path.relpath(os.path.join(root, f), PY_PACKAGE)[:-3].replace(os.sep, ".")
            src = py_layer_of(rel)
            path = os.path.join(root, f)
            if src is None:
                problems.append(f"{path}: module {rel} is in no layer (PY_LAYERS)")
                continue
            package = rel.rsplit(".", 1)[0] if "." in rel else ""
            text = open(path, encoding="utf-8").read()
            for m in PY_IMPORT.finditer(text):
                if m.group(4):
                    targets = [m.group(4)]
                else:
                    base = package.split(".") if package else []
                    up = len(m.group(1)) - 1
                    base = base[:len(base) - up] if up else base
                    if m.group(2):
                        targets = [".".join(base + [m.group(2)])]
                    else:
                        items = m.group(3).replace("(", " ").replace(")", " ").split(",")
                        names = [i.split()[0] for i in items if i.split()]  # `x as y` is x
                        targets = [".".join(base + [n]) for n in names]
                for t in targets:
                    dst = py_layer_of(t) or py_layer_of(t + ".__init__")
                    if dst is None:
                        problems.append(f"{path}: imports {t}, in no layer (PY_LAYERS)")
                        continue
                    count += 1
                    if dst[0] > src[0]:
                        problems.append(f"{path} ({src[1]}) imports {t} ({dst[1]}): up a layer")
    return problems, count


def main():
    problems = []
    edges = {}
    neutral_used = set()
    for root, dirs, files in os.walk("."):
        dirs[:] = [d for d in dirs if not d.startswith(SKIP) and not d.startswith(".")]
        for name in files:
            if not SOURCE.search(name):
                continue
            path = os.path.normpath(os.path.join(root, name))
            folder = os.path.dirname(path)
            src = layer_of(folder)
            if src is None:
                problems.append(f"{path}: folder {folder} is in no layer (tools/check_layers.py)")
                continue
            text = open(path, encoding="utf-8", errors="replace").read()
            for m in INCLUDE.finditer(text):
                inc = m.group(1)
                if not os.path.isfile(inc):
                    continue  # a system or generated header
                dst_folder = os.path.dirname(inc)
                if dst_folder == folder:
                    continue
                dst = layer_of(dst_folder)
                if dst is None:
                    problems.append(f"{path}: includes {inc}, in no layer")
                    continue
                edges.setdefault(folder, {}).setdefault(dst_folder, path)
                if dst[0] > src[0]:
                    problems.append(f"{path} ({src[1]}) includes {inc} ({dst[1]}): up a layer")
                if folder in DEVICE_FOLDERS and dst_folder in DEVICE_FOLDERS:
                    name = os.path.basename(inc)
                    if folder == "ops/kernels/cuda" and name in NEUTRAL_IN_CPU:
                        neutral_used.add(name)
                    else:
                        problems.append(f"{path} includes {inc}: sideways between device "
                                        "folders (move what both need to a neutral folder)")
    # Folder cycles (Tarjan's strongly connected components).
    index, low, stack, on, sccs = {}, {}, [], set(), []
    def visit(v):
        index[v] = low[v] = len(index)
        stack.append(v)
        on.add(v)
        for w in edges.get(v, {}):
            if w not in index:
                visit(w)
                low[v] = min(low[v], low[w])
            elif w in on:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            scc = []
            while True:
                w = stack.pop()
                on.discard(w)
                scc.append(w)
                if w == v:
                    break
            if len(scc) > 1:
                sccs.append(sorted(scc))
    for v in sorted(edges):
        if v not in index:
            visit(v)
    for scc in sccs:
        detail = "; ".join(f"{a} -> {b} ({edges[a][b]})" for a in scc for b in edges.get(a, {})
                           if b in scc)
        problems.append(f"folder cycle: {' <-> '.join(scc)}: {detail}")
    for name in sorted(NEUTRAL_IN_CPU - neutral_used):
        problems.append(f"ops/kernels/cpu/{name} is listed as device-neutral but ops/kernels/cuda "
                        "no longer includes it: strike it from NEUTRAL_IN_CPU")
    py_problems, py_imports = python_problems()
    problems += py_problems
    for p in problems:
        print("layering:", p)
    folders = len({f for f in edges} | {g for v in edges.values() for g in v})
    print(f"layering: {folders} folders, {sum(len(v) for v in edges.values())} folder edges, "
          f"{py_imports} Python imports, {len(problems)} problems")
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main())
