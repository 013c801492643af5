"""Inference and boxing without tensors: ``infer``, ``ops``, ``plan_boxing``."""

from . import _C
from .placement import placement as _placement
from .sbp import parse_nd_sbp, to_nd_sbp_text

__all__ = ["infer", "ops", "plan_boxing", "InferResult", "BlobLayout", "BoxingPlan", "cost_policies"]


class BlobLayout:
    """One blob of an inferred call: its shape, dtype and chosen layout; for an
    input, what it arrived as and the boxing that moves it (``boxing_bytes``)."""

    def __init__(self, d):
        self.name = d["bn"]
        self.shape = tuple(d["shape"])
        self.dtype = d["dtype"]
        self.sbp = parse_nd_sbp(d["nd_sbp"])
        self.producer_sbp = parse_nd_sbp(d["producer"]) if "producer" in d else None
        self.boxing_bytes = d.get("boxing_bytes", 0)
        self.boxing = [dict(s) for s in d.get("boxing_steps", [])]

    @property
    def needs_boxing(self):
        return self.producer_sbp is not None and self.producer_sbp != self.sbp

    def __repr__(self):
        return f"BlobLayout({self.name}: {self.dtype}{list(self.shape)} {to_nd_sbp_text(self.sbp)})"


class InferResult:
    """What ``infer`` returns: the signature, each output's shape, dtype and
    layout, the boxing each input needs, and (with ``explain``) every candidate."""

    def __init__(self, d):
        self._d = d
        self.op = d["op"]
        self.placement = _placement(d["placement"])
        self.cost = d["cost"]
        self.signature = d["signature"]
        self.inputs = [BlobLayout(b) for b in d["inputs"]]
        self.outputs = [BlobLayout(b) for b in d["outputs"]]
        self.num_candidates = d["num_candidates"]
        self.used_broadcast_fallback = d["used_broadcast_fallback"]

    @property
    def boxing_bytes(self):
        return sum(b.boxing_bytes for b in self.inputs)

    def explain(self):
        """Every candidate as a dict: rank (1 = chosen, 0 = filtered), signature,
        order_value, copy_cost (None: unsupported), status and note."""
        if not self._d["candidates"]:
            return InferResult(_C.infer(*self._request, explain=True)).explain()
        return [dict(c) for c in self._d["candidates"]]

    def __str__(self):
        return self.signature

    def __repr__(self):
        return f"InferResult({self.op} on {self.placement}: {self.signature})"


def _input_triple(x):
    """(shape, dtype, sbp) from a tuple/dict or anything with shape, dtype and sbp."""
    if isinstance(x, dict):
        return tuple(x["shape"]), x.get("dtype", "f32"), to_nd_sbp_text(x["sbp"])
    if hasattr(x, "shape") and hasattr(x, "sbp") and hasattr(x, "dtype"):
        return tuple(x.shape), str(x.dtype), to_nd_sbp_text(x.sbp)
    if isinstance(x, (tuple, list)) and len(x) == 3:
        shape, dtype, sbp = x
        return tuple(shape), str(dtype), to_nd_sbp_text(sbp)
    raise ValueError(f"input {x!r} must be (shape, dtype, sbp), a dict with those keys, or a tensor")


def infer(op, inputs, attrs=None, placement="cpu:0", cost="oneflow", constraints=None, explain=False):
    """The signature the engine chooses for one call of ``op``.

    ``inputs``: one (shape, dtype, sbp) per input blob (or global tensors);
    ``constraints``: {blob name: sbp} that the choice must respect."""
    request = (
        op,
        [_input_triple(x) for x in inputs],
        dict(attrs or {}),
        str(_placement.of(placement)),
        cost,
        None if constraints is None else {k: to_nd_sbp_text(v) for k, v in constraints.items()},
    )
    r = InferResult(_C.infer(*request, explain=explain))
    r._request = request
    return r


def ops():
    """The catalog: one dict per op (name, inputs, outputs, attrs, doc, has_sbp_rule,
    aliases: the other names accepted for it, extended_partials: whether the planned
    policy offers it P(max)/P(min) candidates)."""
    return _C.ops()


def cost_policies():
    return _C.cost_policies()


class BoxingPlan:
    """The planner's exact plan from one layout to another."""

    def __init__(self, d):
        self._d = d
        self.steps = [dict(s) for s in d["steps"]]
        self.total_bytes = d["total_bytes"]
        self.max_rank_bytes = d["max_rank_bytes"]
        self.time_s = d["time_s"]
        self.src = parse_nd_sbp(d["src"])
        self.dst = parse_nd_sbp(d["dst"])

    def summary(self):
        return self._d["summary"]

    def to_dot(self):
        """Graphviz: the layouts as nodes, one edge per step (collective, axes, bytes)."""
        lines = ["digraph boxing {", "  rankdir=LR;"]
        nodes = [self._d["src"]] + [s["result"] for s in self.steps]
        for i, n in enumerate(nodes):
            lines.append(f'  n{i} [shape=box, label="{n}"];')
        for i, s in enumerate(self.steps):
            axes = ",".join(str(a) for a in s["mesh_axes"])
            lines.append(f'  n{i} -> n{i + 1} [label="{s["collective"]} axes [{axes}]\\n'
                         f'{s["bytes_per_rank"]} B/rank"];')
        lines.append("}")
        return "\n".join(lines) + "\n"

    def __len__(self):
        return len(self.steps)

    def __str__(self):
        return self.summary()


def plan_boxing(shape, dtype, placement, src, dst, dst_placement=None):
    """The cheapest exact plan moving a tensor from ``src`` to ``dst``."""
    return BoxingPlan(_C.plan_boxing(
        tuple(shape), str(dtype), str(_placement.of(placement)), to_nd_sbp_text(src),
        to_nd_sbp_text(dst), None if dst_placement is None else str(_placement.of(dst_placement))))
