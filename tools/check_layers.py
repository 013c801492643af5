#!/usr/bin/env python3
"""The layering check (docs/ARCHITECTURE.md): every #include of project code
points down or sideways, never up a layer, the folder graph has no cycle,
and every file's namespace is its folder's. Run from the repository root;
exit 1 naming each violation.

Layers, bottom up; a folder's layer is that of its longest listed prefix.
Tests, fuzzers, benchmarks and the documentation's examples stand on top
and may include anything.

Four more rules: no two headers share a name; the device kernel folders
(kernels/cpu, kernels/cuda) never include each other (what both need
lives in kernels/common); a
namespace opened at file scope is the folder's (NAMESPACES) or one nested
in it, but for anonymous ones and blocks of forward declarations; and the
Python package's modules import down their own layers (PY_LAYERS).
"""
import os
import re
import sys

LAYERS = [
    # (layer, name, folders)
    (0, "messages", ["proto"]),
    (1, "values", ["oneflow_sbp/values"]),
    (2, "rule API", ["oneflow_sbp/rule_api"]),
    (3, "selection", ["oneflow_sbp/inference"]),
    (4, "op rules", ["ops"]),
    (5, "boxing planner", ["boxing"]),
    (6, "storage", ["oneflow_sbp/storage"]),
    (7, "runtime", ["comm", "runtime", "kernels"]),
    (8, "engine facade", ["engine"]),
    (9, "eager and graph", ["eager", "graph"]),
    (10, "bridge and checkpoints", ["io", "checkpoint"]),
    (11, "models and importers", ["models", "importers"]),
    (12, "fronts", ["cli", "python", "tools"]),
    (13, "tests", ["tests", "fuzz", "docs/examples", "tools/bench"]),
]
# The device kernel folders: neither includes the other.
DEVICE_FOLDERS = ("kernels/cpu", "kernels/cuda")
# Each library folder's namespace (a folder not listed takes its parent's;
# the top layer has none). The bottom folder's four parts share the
# package's own namespace: their names are the vocabulary everything
# else speaks (Shape, NdSbp, OpRegistry, InferCache, LocalTensor).
NAMESPACES = {
    "oneflow_sbp": "oneflow_sbp",
    "ops": "oneflow_sbp::ops",
    "boxing": "oneflow_sbp::boxing",
    "comm": "oneflow_sbp::comm",
    "runtime": "oneflow_sbp::runtime",
    "kernels": "oneflow_sbp::kernels",
    "engine": "oneflow_sbp::engine",
    "eager": "oneflow_sbp::eager",
    "graph": "oneflow_sbp::graph",
    "io": "oneflow_sbp::io",
    "checkpoint": "oneflow_sbp::checkpoint",
    "models": "oneflow_sbp::models",
    "importers": "oneflow_sbp::importers",
    "cli": "oneflow_sbp::cli",
    "python": "oneflow_sbp::python",
}
NAMESPACE_FREE = ("tests", "fuzz", "docs", "tools", "proto")
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
            if (folder == f or folder.startswith(f + "/")) and (best is None or len(f) > len(best[2])):
                best = (layer, name, f)
    return best


def namespace_of(folder):
    parts = folder.split("/")
    for n in range(len(parts), 0, -1):
        ns = NAMESPACES.get("/".join(parts[:n]))
        if ns:
            return ns
    return None


FORWARD_ONLY = re.compile(r"^(\s*((class|struct)\s+\w+\s*;|//[^\n]*))*\s*$")


def namespace_problems(path, text):
    """File-scope namespaces that are not the folder's (or nested in it)."""
    folder = os.path.dirname(path)
    if folder.split("/")[0] in NAMESPACE_FREE:
        return []
    want = namespace_of(folder)
    if want is None:
        return [f"{path}: folder {folder} has no namespace (NAMESPACES)"]
    code = re.sub(r"//[^\n]*|/\*.*?\*/", "", text, flags=re.S)
    code = re.sub(r'"(?:[^"\\\n]|\\.)*"|\'(?:[^\'\\\n]|\\.)*\'', '""', code)
    problems, depth, i = [], 0, 0
    opener = re.compile(r"\bnamespace\s+([\w:]+)\s*\{")
    while i < len(code):
        c = code[i]
        if c == "{":
            depth += 1
        elif c == "}":
            depth -= 1
        elif depth == 0 and code.startswith("namespace", i):
            m = opener.match(code, i)
            if m:
                ns = m.group(1)
                body_start = m.end()
                d, j = 1, body_start
                while j < len(code) and d:
                    d += {"{": 1, "}": -1}.get(code[j], 0)
                    j += 1
                body = code[body_start:j - 1]
                if ns != want and not ns.startswith(want + "::") and not FORWARD_ONLY.match(body):
                    problems.append(f"{path}: namespace {ns}, but {folder}/ is {want}")
                i = j
                continue
        i += 1
    return problems


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
    homes = {}  # header name -> its paths
    for root, dirs, files in os.walk("."):
        dirs[:] = [d for d in dirs if not d.startswith(SKIP) and not d.startswith(".")]
        for name in files:
            if not SOURCE.search(name):
                continue
            path = os.path.normpath(os.path.join(root, name))
            if name.endswith((".h", ".cuh")):
                homes.setdefault(name, []).append(path)
            folder = os.path.dirname(path)
            src = layer_of(folder)
            if src is None:
                problems.append(f"{path}: folder {folder} is in no layer (tools/check_layers.py)")
                continue
            text = open(path, encoding="utf-8", errors="replace").read()
            problems += namespace_problems(path, text)
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
                    problems.append(f"{path} includes {inc}: sideways between device "
                                    "folders (move what both need to kernels/common)")
    # No two headers share a name: an include names one file, and so does
    # a reader searching for it.
    for name, paths in sorted(homes.items()):
        if len(paths) > 1:
            problems.append(f"{' and '.join(sorted(paths))}: two headers named {name}")
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
