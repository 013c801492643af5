#!/usr/bin/env python3
"""Real OneFlow 0.9.0 as the oracle of the `oneflow` cost policy (issue 34).

Runs op calls on eager global tensors in OneFlow itself and records the
output nd_sbp OneFlow chose, one call per line, in the notation of
`sbp infer`:

  relu<TAB>cpu:0-3 [2,2]<TAB>f32[8,12]:(S(0),P)<TAB><TAB>(S(0),S(1))
  op     placement         inputs (;-separated) attrs (;-separated) answer

The answer is OneFlow's first output layout, or "refused: <reason>" when
OneFlow raised, or "aborted: <reason>" when its processes died (it aborts
when a shard would be empty; it runs kernels asynchronously, so the call
that died may have been an earlier one, whose layout was already
recorded), or "skipped: <reason>" when OneFlow's functor would run
another op, or "unmade: <reason>" when OneFlow cannot make the inputs (it
refuses a split of a dim into more parts than it has; we allow empty
shards). Never run by a test: it needs Python 3.10,
oneflow==0.9.0 and up to 8 CPU processes. Make it in a venv outside the
repository, then let tools/reference/run_oneflow_oracle.sh drive it:

  python3.10 -m venv ~/venvs/oneflow09
  ~/venvs/oneflow09/bin/pip install oneflow==0.9.0 'nvidia-cudnn-cu11<9' \\
      nvidia-cublas-cu11 'numpy<2'
  tools/reference/run_oneflow_oracle.sh ~/venvs/oneflow09/bin/python \\
      tests/testdata/oneflow_oracle_golden.txt

Two modes:

  oneflow_oracle.py calls SWEEP > CALLS     the call list (plain Python, no
                                            OneFlow): generated cases, then
                                            the sweep's calls OneFlow can make
  oneflow_oracle.py run CALLS OUT START     under oneflow.distributed.launch:
                                            runs the calls whose placement
                                            has this many ranks, from index
                                            START, appending answers to OUT

The generated cases cover every layout class of each input on 1-D meshes of
2, 3, 4 and 8, and on [2,2], [2,4], [4,2] and [2,2,2] (the 3-D pairs
sampled), with uneven shapes (6 and 10 over 4 or 8 parts, 12 over 8).
Partial inputs are made as OneFlow users make them: broadcast zeros
converted with to_global (OneFlow's random ops refuse P). Each op is called
through the OneFlow function that dispatches the user op of the same name
(binary_functor.cpp and its neighbours say which): `flow._C.add` of equal
shapes runs add_n and of unequal ones broadcast_add; `mul`, `pow`,
`maximum` and `minimum` of equal shapes run other ops (multiply, pow,
elementwise_*), so only their broadcasting calls are made. Ops OneFlow's
Python API cannot dispatch alone (the *_grad ops, conv2d with a bias input,
which OneFlow's functor splits into conv2d and bias_add, reduce_mean, which
it lowers to reduce_sum) are not called; SKIPPED below names them.
"""
import itertools
import os
import re
import sys

# Our ops OneFlow's eager Python API does not dispatch as one user op of the
# same name, and why: the test reports them, and they stay out of the calls.
SKIPPED = {
    "conv2d": "OneFlow's Conv2d functor runs conv2d without bias, then bias_add",
    "reduce_mean": "OneFlow lowers mean to reduce_sum and scalar_mul",
    "split": "OneFlow's split_with_size runs one narrow per part",
    "copy": "OneFlow's copy changes device; no global same-device copy op",
    "scalar_div": "OneFlow's div by a scalar runs scalar_mul of its reciprocal",
    "sparse_softmax_cross_entropy": "OneFlow's functor boxes global logits itself",
    "sparse_softmax_cross_entropy_ms": "dispatched only inside OneFlow's functor",
    "argwhere": "dynamic output shape; OneFlow's global argwhere is not a single op",
}
GRAD_REASON = "a backward op: OneFlow's Python API reaches it only through autograd"

B_TEXT, P_TEXT = "B", "P"


def layout_texts(rank, axes):
    """Every nd_sbp text of a tensor of `rank` dims on `axes` mesh axes."""
    one = [B_TEXT, P_TEXT] + ["S(%d)" % i for i in range(rank)]
    return ["(" + ",".join(c) + ")" for c in itertools.product(one, repeat=axes)]


def placement_text(mesh):
    n = 1
    for m in mesh:
        n *= m
    if len(mesh) == 1:
        return "cpu:0-%d" % (n - 1)
    return "cpu:0-%d [%s]" % (n - 1, ",".join(str(m) for m in mesh))


def tensor_text(dtype, shape, nd):
    return "%s[%s]:%s" % (dtype, ",".join(str(d) for d in shape), nd)


# (op, input (dtype, shape) list, attrs). Shapes are uneven over the meshes
# but leave no rank an empty shard when the input is split.
UNARY = [
    ("relu", [("f32", (8, 12))], ""),
    ("gelu", [("f32", (8, 10))], ""),
    ("softmax", [("f32", (8, 12))], ""),
    ("transpose", [("f32", (8, 12))], "perm=1,0"),
    ("reduce_sum", [("f32", (8, 12))], "axis=1"),
    ("reduce_max", [("f32", (8, 12, 16))], "axis=1"),
]
BINARY = [
    ("add_n", [("f32", (8, 12)), ("f32", (8, 12))], ""),
    ("matmul", [("f32", (8, 16)), ("f32", (16, 12))], ""),
]
# Issue 34's widening: gather's P inputs, cat, reshape, broadcasts of
# unequal shapes, on [2], [3], [4], [2,2] (and their N-D ties).
WIDE = [
    ("gather", [("f32", (8, 12)), ("i64", (4,))], "axis=0"),
    ("gather", [("f32", (8, 12)), ("i64", (2, 3))], "axis=1"),
    ("cat", [("f32", (8, 12)), ("f32", (8, 4))], "axis=1"),
    ("reshape", [("f32", (8, 12))], "shape=12,8"),
    ("reshape", [("f32", (8, 12))], "shape=4,2,12"),
    ("broadcast_add", [("f32", (8, 1)), ("f32", (8, 12))], ""),
    ("broadcast_mul", [("f32", (12,)), ("f32", (8, 12))], ""),
    ("broadcast_sub", [("f32", (8, 12)), ("f32", (1, 12))], ""),
    ("broadcast_maximum", [("f32", (8, 12)), ("f32", (12,))], ""),
]


def generated_calls():
    out = []

    def add(op, mesh, specs, attrs, sample=1):
        axes = len(mesh)
        per_input = [layout_texts(len(shape), axes) for _, shape in specs]
        combos = list(itertools.product(*per_input))[::sample]
        for nds in combos:
            inputs = ";".join(tensor_text(d, s, nd) for (d, s), nd in zip(specs, nds))
            out.append((op, placement_text(mesh), inputs, attrs))

    for mesh in ([4], [2, 2], [8], [2, 4], [4, 2], [2, 2, 2]):
        for op, specs, attrs in UNARY:
            add(op, mesh, specs, attrs)
        for op, specs, attrs in BINARY:
            add(op, mesh, specs, attrs, 37 if len(mesh) == 3 else 1)
    for mesh in ([2], [3]):
        for op, specs, attrs in UNARY + BINARY:
            add(op, mesh, specs, attrs)
    for mesh in ([2], [3], [4], [2, 2]):
        for op, specs, attrs in WIDE:
            add(op, mesh, specs, attrs)
    return out


def sweep_calls(path):
    """The calls of tests/testdata/infer_sweep_calls.txt OneFlow can make."""
    out = []
    for line in open(path, encoding="utf-8"):
        fields = line.rstrip("\n").split("\t")
        if not fields[0]:
            continue
        op, placement, inputs, attrs = None, None, [], []
        for f in fields:
            key, _, value = f.partition("=")
            if key == "--op":
                op = value
            elif key == "--placement":
                placement = value
            elif key == "--input":
                inputs.append(value)
            elif key == "--attr":
                attrs.append(value)
        if op in SKIPPED or op.endswith("_grad") or op not in ADAPTERS:
            continue
        out.append((op, placement, ";".join(inputs), ";".join(attrs)))
    return out


def parse_attrs(text):
    attrs = {}
    for a in text.split(";"):
        if a:
            key, _, value = a.partition("=")
            attrs[key] = value
    return attrs


def ints(text):
    return [int(v) for v in text.split(",") if v != ""]


def same_shape(args):
    return all(tuple(a.shape) == tuple(args[0].shape) for a in args)


def needs_broadcast(name):
    """OneFlow runs another op when the shapes are equal."""

    def call(F, args, attrs):
        if same_shape(args):
            raise NotDispatched("equal shapes: OneFlow's functor runs another op")
        return getattr(F, name)(*args)

    return call


class NotDispatched(Exception):
    pass


def not_dispatched(why):
    raise NotDispatched(why)


def _unary(name):
    return lambda F, a, at: getattr(F, name)(a[0])


ADAPTERS = {op: _unary(op) for op in [
    "abs", "ceil", "cos", "erf", "exp", "fast_gelu", "floor", "gelu", "log", "mish",
    "negative", "reciprocal", "relu", "round", "rsqrt", "sigmoid", "sign", "silu", "sin",
    "sqrt", "square", "tanh", "logical_not", "identity"]}
ADAPTERS.update({
    "softplus": lambda F, a, at: F.softplus(a[0]),
    "softmax": lambda F, a, at: F.softmax(a[0]),
    "log_softmax": lambda F, a, at: F.log_softmax(a[0], -1),
    "transpose": lambda F, a, at: F.transpose(a[0], perm=ints(at["perm"])),
    "reduce_sum": lambda F, a, at: F.reduce_sum(a[0], ints(at["axis"]), at.get("keepdims") == "true"),
    "reduce_max": lambda F, a, at: F.reduce_max(a[0], ints(at["axis"]), at.get("keepdims") == "true"),
    "reduce_min": lambda F, a, at: F.reduce_min(a[0], ints(at["axis"]), at.get("keepdims") == "true"),
    "reduce_prod": lambda F, a, at: F.reduce_prod(a[0], ints(at["axis"]), at.get("keepdims") == "true"),
    "reduce_nansum": lambda F, a, at: F.reduce_nansum(a[0], ints(at["axis"]), at.get("keepdims") == "true"),
    "reduce_sum_like": lambda F, a, at: F.reduce_sum_like(a[0], a[1], ints(at["axis"])),
    # add of equal shapes is add_n; add_n of more goes through the list form.
    "add_n": lambda F, a, at: F.add(a[0], a[1]) if len(a) == 2 else not_dispatched(
        "add_n of more than 2 inputs: OneFlow's Python API adds pairwise"),
    "broadcast_add": needs_broadcast("add"),
    "broadcast_mul": needs_broadcast("mul"),
    "broadcast_pow": needs_broadcast("pow"),
    "broadcast_maximum": needs_broadcast("maximum"),
    "broadcast_minimum": needs_broadcast("minimum"),
    "broadcast_sub": lambda F, a, at: F.sub(a[0], a[1]),
    "broadcast_div": lambda F, a, at: F.div(a[0], a[1]),
    "broadcast_fmod": lambda F, a, at: F.fmod(a[0], a[1]),
    "broadcast_equal": lambda F, a, at: F.broadcast_equal(a[0], a[1]),
    "broadcast_not_equal": lambda F, a, at: F.not_equal(a[0], a[1]),
    "broadcast_greater": lambda F, a, at: F.greater(a[0], a[1]),
    "broadcast_greater_equal": lambda F, a, at: F.greater_equal(a[0], a[1]),
    "broadcast_less": lambda F, a, at: F.less(a[0], a[1]),
    "broadcast_less_equal": lambda F, a, at: F.less_equal(a[0], a[1]),
    "broadcast_like": lambda F, a, at: F.broadcast_like(a[0], a[1], ints(at["broadcast_axes"])),
    "matmul": lambda F, a, at: F.matmul(a[0], a[1]),
    "batch_matmul": lambda F, a, at: F.batch_matmul(a[0], a[1]),
    "broadcast_matmul": lambda F, a, at: F.matmul(a[0], a[1]),
    "bias_add": lambda F, a, at: F.bias_add(a[0], a[1], int(at.get("axis", "1"))),
    "cat": lambda F, a, at: F.concat(list(a), dim=int(at["axis"])),
    "stack": lambda F, a, at: F.stack(list(a), dim=int(at["axis"])),
    "squeeze": lambda F, a, at: F.squeeze(a[0], ints(at["axes"])),
    "expand_dims": lambda F, a, at: F.expand_dims(a[0], int(at["axis"])),
    "expand": lambda F, a, at: F.expand(a[0], ints(at["expand_shape"])),
    "reshape": lambda F, a, at: F.reshape(a[0], ints(at["shape"])),
    "narrow": lambda F, a, at: F.narrow(a[0], int(at["dim"]), int(at["start"]), int(at["length"])),
    "slice": lambda F, a, at: F.slice(a[0], ints(at["start"]), ints(at["stop"]), ints(at["step"])),
    "slice_update": lambda F, a, at: F.slice_update(a[0], a[1], ints(at["start"]), ints(at["stop"]),
                                                    ints(at["step"]), False),
    "gather": lambda F, a, at: F.gather(a[0], a[1], int(at.get("axis", "0"))),
    "dim_gather": lambda F, a, at: F.dim_gather(a[0], int(at["dim"]), a[1], False),
    "embedding": lambda F, a, at: F.embedding(a[0], a[1], None, False),
    "where": lambda F, a, at: F.where(a[0], a[1], a[2]),
    "layer_norm": lambda F, a, at: F.layer_norm_affine(
        a[0], a[1], a[2], int(at["begin_norm_axis"]),
        int(at.get("begin_params_axis", at["begin_norm_axis"])), 1e-5),
    "rms_norm": lambda F, a, at: F.rms_norm(a[0], a[1], ints(at["normalized_shape"]), 1e-6),
})


def placement_of(text):
    """(ranks, mesh) of "cpu:0-N" or "cpu:0-N [a,b,...]"."""
    m = re.match(r"cpu:0-(\d+)(?: \[([\d,]+)\])?$", text)
    n = int(m.group(1)) + 1
    mesh = ints(m.group(2)) if m.group(2) else [n]
    return n, mesh


def run(calls_path, out_path, start):
    import oneflow as flow

    F = flow._C
    B, P = flow.sbp.broadcast, flow.sbp.partial_sum
    dtypes = {"f32": flow.float32, "i64": flow.int64, "i32": flow.int32, "bool": flow.bool,
              "bf16": flow.bfloat16, "f16": flow.float16}

    def sbp_of(text):
        if text == "B":
            return B
        if text == "P":
            return P
        return flow.sbp.split(int(text[2:-1]))

    def sbp_text(sbp):
        if sbp == B:
            return "B"
        if sbp == P:
            return "P"
        text = str(sbp)  # oneflow.sbp.split(dim=k)
        return "S(%s)" % text[text.index("dim=") + 4:text.index(")")]

    def flow_placement(mesh):
        n = 1
        for m in mesh:
            n *= m
        ranks = list(range(n))
        for extent in reversed(mesh[1:]):
            ranks = [ranks[i:i + extent] for i in range(0, len(ranks), extent)]
        return flow.placement("cpu", ranks=ranks)

    def make(text, where, axes):
        m = re.match(r"(\w+)\[([\d,]*)\]:\((.*)\)$", text)
        dtype, shape = dtypes[m.group(1)], ints(m.group(2))
        nd = [sbp_of(s) for s in m.group(3).split(",")]
        t = flow.zeros(*shape, dtype=dtype, placement=where, sbp=[B] * axes)
        return t.to_global(sbp=nd)

    def call_one(op, inputs, attrs, where, axes):
        try:
            args = [make(t, where, axes) for t in inputs.split(";")]
        except Exception as e:  # OneFlow cannot hold such an input (a dim < its parts)
            return "unmade: " + " ".join(str(e).split())[:200]
        try:
            result = ADAPTERS[op](F, args, parse_attrs(attrs))
        except NotDispatched as e:
            return "skipped: " + str(e)
        except Exception as e:  # OneFlow's refusal, recorded with its reason
            return "refused: " + " ".join(str(e).split())[:200]
        if isinstance(result, (list, tuple)):
            result = result[0]
        return "(" + ",".join(sbp_text(s) for s in result.sbp) + ")"

    world = flow.env.get_world_size()
    rank = flow.env.get_rank()
    placements = {}
    lines = [l.rstrip("\n").split("\t") for l in open(calls_path, encoding="utf-8")]
    out = open(out_path, "a", encoding="utf-8") if rank == 0 else None
    for index, (op, placement, inputs, attrs) in enumerate(lines):
        if index < start:
            continue
        n, mesh = placement_of(placement)
        if n != world:
            continue
        if rank == 0:
            # The runner finds the call that killed the processes from this.
            with open(out_path + ".started.tmp", "w") as s:
                s.write("%d\n" % index)
            os.replace(out_path + ".started.tmp", out_path + ".started")
        key = tuple(mesh)
        if key not in placements:
            placements[key] = flow_placement(mesh)
        answer = call_one(op, inputs, attrs, placements[key], len(mesh))
        if out is not None:
            out.write("\t".join([str(index), op, placement, inputs, attrs, answer]) + "\n")
            out.flush()
    if rank == 0:
        os.remove(out_path + ".started")


def main():
    if sys.argv[1] == "calls":
        calls = generated_calls() + sweep_calls(sys.argv[2])
        for c in calls:
            print("\t".join(c))
    elif sys.argv[1] == "run":
        run(sys.argv[2], sys.argv[3], int(sys.argv[4]))
    else:
        raise SystemExit(__doc__)


if __name__ == "__main__":
    main()
