"""SBP values in OneFlow's spelling (``sbp.split(0)``, ``sbp.broadcast``,
``sbp.partial_sum``) and DTensor's (``Shard(0)``, ``Replicate()``,
``Partial()``). Both spellings make the same value: they compare equal,
hash alike, pickle, and ``str()`` gives the engine's canonical text.

Partials of a max or min (``sbp.partial_max``, ``Partial("max")``, text
``P(max)``) are the ``planned`` policy's extension: OneFlow has only
partial sums, so the ``oneflow`` policy never produces them."""

from . import _C

__all__ = ["SbpParallel", "split", "broadcast", "partial_sum", "partial_max", "partial_min",
           "Shard", "Replicate", "Partial", "to_nd_sbp_text", "parse_nd_sbp"]

_REDUCE_OPS = ("sum", "max", "min")


class SbpParallel:
    """One mesh axis's layout: split along a tensor dim, broadcast, or partial
    (sum, max or min: ``reduce_op``)."""

    __slots__ = ("_kind", "_axis", "_reduce_op")

    def __init__(self, kind, axis=None, reduce_op=None):
        if kind not in ("S", "B", "P"):
            raise ValueError(f"sbp kind {kind!r} must be 'S', 'B' or 'P'")
        if kind == "S":
            if not isinstance(axis, int) or isinstance(axis, bool) or axis < 0:
                raise ValueError(f"split axis {axis!r} must be an int >= 0")
        elif axis is not None:
            raise ValueError(f"{kind} takes no axis")
        if kind == "P":
            reduce_op = "sum" if reduce_op is None else reduce_op
            if reduce_op not in _REDUCE_OPS:
                raise ValueError(f"partial reduce_op {reduce_op!r} must be 'sum', 'max' or 'min'")
        elif reduce_op is not None:
            raise ValueError(f"{kind} takes no reduce_op")
        self._kind = kind
        self._axis = axis
        self._reduce_op = reduce_op

    @property
    def kind(self):
        return self._kind

    @property
    def axis(self):
        """The split dim (None unless split)."""
        return self._axis

    @property
    def reduce_op(self):
        """How partials combine: "sum", "max" or "min" (None unless partial)."""
        return self._reduce_op

    # DTensor's names for the same facts.
    dim = axis

    def is_split(self):
        return self._kind == "S"

    def is_broadcast(self):
        return self._kind == "B"

    def is_partial(self):
        return self._kind == "P"

    is_shard = is_split
    is_replicate = is_broadcast

    def __eq__(self, other):
        return isinstance(other, SbpParallel) and self._key() == other._key()

    def _key(self):
        return (self._kind, self._axis, self._reduce_op)

    def __hash__(self):
        return hash(self._key())

    def __reduce__(self):
        return (SbpParallel, self._key())

    def __str__(self):
        if self._kind == "S":
            return f"S({self._axis})"
        if self._kind == "P" and self._reduce_op != "sum":
            return f"P({self._reduce_op})"
        return self._kind

    def __repr__(self):
        if self._kind == "S":
            return f"oneflow_sbp.sbp.split({self._axis})"
        if self._kind == "B":
            return "oneflow_sbp.sbp.broadcast"
        return f"oneflow_sbp.sbp.partial_{self._reduce_op}"


def split(axis):
    """OneFlow's ``flow.sbp.split(axis)``."""
    return SbpParallel("S", axis)


broadcast = SbpParallel("B")
partial_sum = SbpParallel("P")
partial_max = SbpParallel("P", reduce_op="max")
partial_min = SbpParallel("P", reduce_op="min")


def Shard(dim):  # noqa: N802 (DTensor's name)
    return SbpParallel("S", dim)


def Replicate():  # noqa: N802
    return broadcast


def Partial(reduce_op="sum"):  # noqa: N802
    """DTensor's ``Partial(reduce_op)``: "sum", "max" or "min"."""
    if reduce_op not in _REDUCE_OPS:
        raise NotImplementedError(f"Partial({reduce_op!r}): partials reduce by sum, max or min")
    return SbpParallel("P", reduce_op=reduce_op)


def parse_sbp(text):
    canon = _C.canonical_sbp(text)
    if canon.startswith("S("):
        return split(int(canon[2:-1]))
    if canon.startswith("P("):
        return SbpParallel("P", reduce_op=canon[2:-1])
    return broadcast if canon == "B" else partial_sum


def parse_nd_sbp(value):
    """A tuple of SbpParallel from text ("(S(0), B)", "[Shard(0), Replicate()]"),
    one SbpParallel, or a sequence of them."""
    if isinstance(value, SbpParallel):
        return (value,)
    if isinstance(value, str):
        canon = _C.canonical_nd_sbp(value)
        return tuple(parse_sbp(p.strip()) for p in canon[1:-1].split(","))
    try:
        items = tuple(value)
    except TypeError:
        raise ValueError(f"sbp {value!r} must be an SbpParallel, a sequence of them, or text") from None
    out = []
    for v in items:
        if isinstance(v, SbpParallel):
            out.append(v)
        elif isinstance(v, str):
            out.append(parse_sbp(v))
        else:
            raise ValueError(f"sbp entry {v!r} must be an SbpParallel (sbp.split(0), Shard(0), ...)")
    if not out:
        raise ValueError("sbp must name at least one mesh axis")
    return tuple(out)


def to_nd_sbp_text(value):
    return "(" + ", ".join(str(s) for s in parse_nd_sbp(value)) + ")"
