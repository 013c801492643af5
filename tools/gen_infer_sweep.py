#!/usr/bin/env python3
"""Writes the `sbp infer` sweep: one call per line, over every op.

The op examples come from tests/rules/op_catalog_test.cc (one per registered op).
Each example runs on four meshes with three producer layouts per input
(seeded), under the oneflow policy (text, table) and the planned policy
(table). tests/rules/infer_sweep_test.sh replays the calls and compares the
answers byte for byte with tests/testdata/infer_sweep_golden.txt.

  tools/gen_infer_sweep.py > tests/testdata/infer_sweep_calls.txt
"""
import random
import re
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
MESHES = ["cpu:0-1", "cpu:0-2", "cpu:0-3 [2,2]", "cpu:0-5 [2,3]"]


def catalog():
    text = (ROOT / "tests/rules/op_catalog_test.cc").read_text()
    entry = re.compile(r'\{"(\w+)", \{([^}]*)\}, \{([^}]*)\}, "')
    for m in entry.finditer(text):
        ins = re.findall(r'"([^"]*)"', m.group(2))
        attrs = re.findall(r'"([^"]*)"', m.group(3))
        yield m.group(1), ins, attrs


def rank(tensor):
    dims = tensor[tensor.index("[") + 1:-1]
    return 0 if dims == "" else len(dims.split(","))


def layout(rng, r, axes, kind):
    def one():
        if kind == "B":
            return "B"
        if kind == "S0":
            return "S(0)" if r > 0 else "B"
        choices = ["B", "P"] + [f"S({k})" for k in range(r)]
        return rng.choice(choices)
    return "(" + ",".join(one() for _ in range(axes)) + ")"


def main():
    rng = random.Random(20261123)
    calls = []
    for op, ins, attrs in catalog():
        for mesh in MESHES:
            axes = 1 if "[" not in mesh else mesh.count(",") + 1
            for kind in ("B", "S0", "random"):
                args = [f"--op={op}", f"--placement={mesh}"]
                args += [f"--attr={a}" for a in attrs]
                args += [f"--input={t}:{layout(rng, rank(t), axes, kind)}" for t in ins]
                fmt = "--format=table" if kind == "random" else "--format=text"
                calls.append(args + [fmt])
                if kind == "random" and mesh != "cpu:0-1":
                    calls.append(args + ["--cost=planned", "--format=table"])
    for c in calls:
        print("\t".join(c))
    print(f"{len(calls)} calls", file=sys.stderr)


if __name__ == "__main__":
    main()
