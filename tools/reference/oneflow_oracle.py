#!/usr/bin/env python3
"""Real OneFlow 0.9.0 as the oracle of the `oneflow` cost policy (issue 34).

Runs op calls on eager global tensors in OneFlow itself and records the
output nd_sbp OneFlow chose, one case per line, in the notation of
`sbp infer`:

  relu<TAB>cpu:0-3 [2,2]<TAB>f32[8,12]:(S(0),P)<TAB><TAB>(S(0),S(1))
  op     placement         inputs (;-separated) attrs  OneFlow's output

A case OneFlow refuses is recorded as "refused: <first line>". Never run by a
test: it needs Python 3.10, oneflow==0.9.0 and 4 or 8 CPU processes. Make it
in a venv outside the repository:

  python3.10 -m venv ~/venvs/oneflow09
  ~/venvs/oneflow09/bin/pip install oneflow==0.9.0 'nvidia-cudnn-cu11<9' \\
      nvidia-cublas-cu11 'numpy<2'
  export LD_LIBRARY_PATH=$(ls -d ~/venvs/oneflow09/lib/python3.10/site-packages/nvidia/*/lib | tr '\\n' :)
  for n in 4 8; do
    ~/venvs/oneflow09/bin/python -m oneflow.distributed.launch --nproc_per_node $n \\
        tools/reference/oneflow_oracle.py OUT.$n
  done
  cat OUT.4 OUT.8 > tests/testdata/oneflow_oracle_golden.txt

Each world size runs its meshes ([4] and [2,2] on 4; [8], [2,4], [4,2]
and [2,2,2] on 8). Partial inputs are made as OneFlow users make them,
broadcast zeros converted with to_global (OneFlow's random ops refuse P).
Each op is called through the OneFlow function that runs the user op of
the same name (`flow._C.*`): `flow.nn.functional.embedding`, for one, runs
OneFlow's gather, not its embedding op.
"""
import itertools
import sys

import oneflow as flow

B = flow.sbp.broadcast
P = flow.sbp.partial_sum


def S(axis):
    return flow.sbp.split(axis)


def sbp_text(sbp):
    if sbp == B:
        return "B"
    if sbp == P:
        return "P"
    # oneflow.sbp.split(dim=k) prints as such; its axis is in the text.
    text = str(sbp)
    return "S(%s)" % text[text.index("dim=") + 4:text.index(")")]


def nd_text(nd):
    return "(" + ",".join(sbp_text(s) for s in nd) + ")"


def layouts(rank, axes):
    """Every nd_sbp of a tensor of `rank` dims on `axes` mesh axes."""
    one = [B, P] + [S(i) for i in range(rank)]
    return list(itertools.product(one, repeat=axes))


# (our op, OneFlow call, input shapes, attrs in our notation). Shapes are
# uneven over the meshes (6 and 10 over 4 or 8 parts) but never leave a
# rank an empty shard, which OneFlow aborts on.
UNARY = [
    ("relu", lambda x: flow._C.relu(x), [(8, 12)], ""),
    ("gelu", lambda x: flow._C.gelu(x), [(8, 10)], ""),
    ("softmax", lambda x: flow._C.softmax(x), [(8, 12)], ""),
    ("transpose", lambda x: flow._C.transpose(x, perm=[1, 0]), [(8, 12)], "perm=1,0"),
    ("reduce_sum", lambda x: flow._C.reduce_sum(x, [1], False), [(8, 12)], "axis=1"),
    ("reduce_max", lambda x: flow._C.reduce_max(x, [1], False), [(8, 12, 16)], "axis=1"),
]
BINARY = [
    # flow.add of two tensors of one shape runs OneFlow's add_n op.
    ("add_n", lambda a, b: flow._C.add(a, b), [(8, 12), (8, 12)], ""),
    ("matmul", lambda a, b: flow._C.matmul(a, b), [(8, 16), (16, 12)], ""),
]


def meshes(world):
    if world == 4:
        return [[4], [2, 2]]
    if world == 8:
        return [[8], [2, 4], [4, 2], [2, 2, 2]]
    raise SystemExit("run on 4 or 8 processes")


def placement_text(mesh):
    n = 1
    for m in mesh:
        n *= m
    return "cpu:0-%d" % (n - 1) if len(mesh) == 1 else "cpu:0-%d [%s]" % (
        n - 1, ",".join(str(m) for m in mesh))


def flow_placement(mesh):
    n = 1
    for m in mesh:
        n *= m
    ranks = list(range(n))
    if len(mesh) == 2:
        ranks = [ranks[i * mesh[1]:(i + 1) * mesh[1]] for i in range(mesh[0])]
    elif len(mesh) == 3:
        ranks = [[ranks[(i * mesh[1] + j) * mesh[2]:(i * mesh[1] + j + 1) * mesh[2]]
                  for j in range(mesh[1])] for i in range(mesh[0])]
    return flow.placement("cpu", ranks=ranks)


def tensor(shape, nd, placement):
    return flow.zeros(*shape, placement=placement, sbp=[B] * len(nd)).to_global(sbp=list(nd))


def cases(world):
    """(our op, placement text, mesh, call, shapes, layouts, attrs), in a fixed order."""
    out = []
    for mesh in meshes(world):
        axes = len(mesh)
        for op, call, shapes, attrs in UNARY:
            for nd in layouts(len(shapes[0]), axes):
                out.append((op, mesh, call, shapes, [nd], attrs))
        for op, call, shapes, attrs in BINARY:
            pairs = list(itertools.product(layouts(len(shapes[0]), axes),
                                           layouts(len(shapes[1]), axes)))
            if axes == 3:
                pairs = pairs[::37]  # a fixed sample of the 3-D pairs
            for a, b in pairs:
                out.append((op, mesh, call, shapes, [a, b], attrs))
    return out


def main():
    world = flow.env.get_world_size()
    rank = flow.env.get_rank()
    lines = []
    placements = {}
    for op, mesh, call, shapes, nds, attrs in cases(world):
        key = tuple(mesh)
        if key not in placements:
            placements[key] = flow_placement(mesh)
        where = placements[key]
        inputs = ";".join("f32[%s]:%s" % (",".join(str(d) for d in s), nd_text(nd))
                          for s, nd in zip(shapes, nds))
        try:
            args = [tensor(s, nd, where) for s, nd in zip(shapes, nds)]
            answer = nd_text(call(*args).sbp)
        except Exception as e:  # OneFlow's refusal, recorded with its reason
            answer = "refused: " + str(e).strip().splitlines()[0][:200]
        lines.append("\t".join([op, placement_text(mesh), inputs, attrs, answer]))
    if rank == 0:
        with open(sys.argv[1], "w") as f:
            f.write("# oneflow %s, %d processes (tools/reference/oneflow_oracle.py)\n" %
                    (flow.__version__, world))
            f.write("\n".join(lines) + "\n")
        print("wrote %d cases to %s" % (len(lines), sys.argv[1]))


if __name__ == "__main__":
    main()
