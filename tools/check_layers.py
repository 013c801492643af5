#!/usr/bin/env python3
"""The layering check (docs/ARCHITECTURE.md): every #include of project code
points down or sideways, never up a layer, and the folder graph has no
cycle. Run from the repository root; exit 1 naming each violation.

Layers, bottom up; a folder's layer is that of its longest listed prefix.
Tests, fuzzers and the documentation's examples stand on top and may
include anything.
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


def main():
    problems = []
    edges = {}
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
    for p in problems:
        print("layering:", p)
    folders = len({f for f in edges} | {g for v in edges.values() for g in v})
    print(f"layering: {folders} folders, {sum(len(v) for v in edges.values())} folder edges, "
          f"{len(problems)} problems")
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main())
