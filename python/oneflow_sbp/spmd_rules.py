"""A Paddle-style front on the same rules: ``get_spmd_rule(name).infer_forward(*specs, **attrs)``.

Paddle describes a layout by ``dims_mapping`` (tensor dim -> mesh axis, -1
replicated) and ``partial_dims`` (mesh axes holding partial sums). Each
spec converts to an nd_sbp (mesh axis a: S(d) if dims_mapping[d] == a, P if
a is in partial_dims, else B), the engine infers, and the answer converts
back, so a Paddle user switches by changing an import."""

from . import _C
from .rules import infer

__all__ = ["DistTensorSpec", "get_spmd_rule", "SpmdRule"]


def _paddle_names():
    """Paddle's rule names (name -> (op, attr renames)), from the op records
    (ops/records/*.toml, aliases in "paddle"), read once."""
    global _PADDLE_NAMES
    if _PADDLE_NAMES is None:
        names = {}
        for o in _C.ops():
            for a in (o["record"] or {}).get("names", ()):
                if "paddle" in a["in"]:
                    names[a["name"]] = (o["name"], dict(a["attrs"]))
        _PADDLE_NAMES = names
    return _PADDLE_NAMES


_PADDLE_NAMES = None
# Paddle attribute names on any op.
_ATTR_RENAMES = {"trans_x": "transpose_a", "trans_y": "transpose_b", "keepdim": "keepdims",
                 "keep_dim": "keepdims", "perm": "perm", "dims": "axis"}


class DistTensorSpec:
    """A tensor's shape and layout in Paddle's convention."""

    def __init__(self, shape, dims_mapping, process_mesh_shape, partial_dims=(), dtype="f32"):
        self.shape = tuple(int(d) for d in shape)
        self.dims_mapping = [int(m) for m in dims_mapping]
        self.process_mesh_shape = tuple(int(d) for d in process_mesh_shape)
        self.partial_dims = tuple(sorted(int(p) for p in partial_dims))
        self.dtype = dtype
        if len(self.dims_mapping) != len(self.shape):
            raise ValueError(f"dims_mapping {self.dims_mapping} must have one entry per dim of shape "
                             f"{list(self.shape)}")
        axes = len(self.process_mesh_shape)
        used = [m for m in self.dims_mapping if m != -1]
        for m in used + list(self.partial_dims):
            if not 0 <= m < axes:
                raise ValueError(f"mesh axis {m} is outside the {axes}-axis mesh {list(self.process_mesh_shape)}")
        if len(set(used)) != len(used) or set(used) & set(self.partial_dims):
            raise ValueError(f"dims_mapping {self.dims_mapping} / partial_dims {list(self.partial_dims)} "
                             "use one mesh axis twice")

    def to_nd_sbp(self):
        out = []
        for a in range(len(self.process_mesh_shape)):
            if a in self.dims_mapping:
                out.append(f"S({self.dims_mapping.index(a)})")
            elif a in self.partial_dims:
                out.append("P")
            else:
                out.append("B")
        return "(" + ", ".join(out) + ")"

    @classmethod
    def from_nd_sbp(cls, shape, nd_sbp_text, mesh_shape, dtype="f32"):
        entries = [e.strip() for e in _C.canonical_nd_sbp(nd_sbp_text)[1:-1].split(",")]
        dims_mapping = [-1] * len(shape)
        partial = []
        for a, e in enumerate(entries):
            if e.startswith("S("):
                d = int(e[2:-1])
                if dims_mapping[d] != -1:
                    raise NotImplementedError(
                        f"layout {nd_sbp_text} splits dim {d} over two mesh axes, which Paddle's "
                        "dims_mapping cannot express")
                dims_mapping[d] = a
            elif e == "P":
                partial.append(a)
        return cls(shape, dims_mapping, mesh_shape, partial, dtype)

    def __eq__(self, other):
        return (isinstance(other, DistTensorSpec) and self.shape == other.shape
                and self.dims_mapping == other.dims_mapping
                and self.process_mesh_shape == other.process_mesh_shape
                and self.partial_dims == other.partial_dims)

    def __repr__(self):
        return (f"DistTensorSpec(shape={list(self.shape)}, dims_mapping={self.dims_mapping}, "
                f"partial_dims={list(self.partial_dims)})")


class SpmdRule:
    def __init__(self, op, attr_renames):
        self.op = op
        self._renames = dict(_ATTR_RENAMES, **attr_renames)

    def infer_forward(self, *specs, **attrs):
        """(input_specs, output_specs) under the engine's choice (OneFlow's cost)."""
        if not specs:
            raise ValueError(f"{self.op}: infer_forward needs at least one DistTensorSpec")
        mesh = specs[0].process_mesh_shape
        for s in specs:
            if s.process_mesh_shape != mesh:
                raise ValueError(f"{self.op}: specs on different meshes {list(mesh)} and "
                                 f"{list(s.process_mesh_shape)}")
        n = 1
        for d in mesh:
            n *= d
        placement = f"cpu:0-{n - 1} [{','.join(str(d) for d in mesh)}]"
        a = {self._renames.get(k, k): v for k, v in attrs.items()}
        r = infer(self.op, [(s.shape, s.dtype, s.to_nd_sbp()) for s in specs], a, placement)
        ins = [DistTensorSpec.from_nd_sbp(b.shape, _text(b.sbp), mesh, b.dtype) for b in r.inputs]
        outs = [DistTensorSpec.from_nd_sbp(b.shape, _text(b.sbp), mesh, b.dtype) for b in r.outputs]
        return ins, outs

    def __repr__(self):
        return f"SpmdRule({self.op!r})"


def _text(sbp):
    return "(" + ", ".join(str(s) for s in sbp) + ")"


def get_spmd_rule(name):
    """The rule of catalog op ``name`` (Paddle's rule names accepted); KeyError if unknown."""
    known = {o["name"] for o in _C.ops()}
    if name in known:
        return SpmdRule(name, {})
    if name in _paddle_names():
        op, renames = _paddle_names()[name]
        return SpmdRule(op, renames)
    raise KeyError(f"no SPMD rule named {name!r}; oneflow_sbp.ops() lists the catalog")
