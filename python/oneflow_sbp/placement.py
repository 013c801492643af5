"""Placements as OneFlow writes them: ``placement("cpu", ranks=[[0, 1], [2, 3]])``
is a [2,2] mesh; ``placement("cpu:0-3 [2,2]")`` is the same in the engine's text."""

from . import _C

__all__ = ["placement"]


def _shape_of(ranks):
    if isinstance(ranks, int):
        return [ranks], []
    ranks = list(ranks)
    if not ranks:
        raise ValueError("placement ranks must not be empty")
    if all(isinstance(r, int) for r in ranks):
        return ranks, [len(ranks)]
    rows = [_shape_of(r) for r in ranks]
    inner = rows[0][1]
    if any(r[1] != inner for r in rows):
        raise ValueError(f"placement ranks {ranks!r} are ragged: every row must have the same shape")
    flat = [x for r in rows for x in r[0]]
    return flat, [len(ranks)] + inner


class placement:  # noqa: N801 (OneFlow's name)
    """A device type, its ranks in mesh order and the mesh shape (hierarchy)."""

    __slots__ = ("_text", "_device", "_ranks", "_hierarchy")

    def __init__(self, type="cpu", ranks=None, hierarchy=None):  # noqa: A002 (OneFlow's argument name)
        if ranks is None:
            info = _C.parse_placement(type)
        else:
            flat, shape = _shape_of(ranks)
            if hierarchy is not None:
                shape = list(hierarchy)
            if sorted(flat) != flat:
                raise ValueError(f"placement ranks {flat} must be ascending in mesh order "
                                 "(the engine numbers devices in ascending order, as OneFlow does)")
            info = _C.make_placement(type, flat, shape if len(shape) > 1 or hierarchy else [])
        self._text = info["text"]
        self._device = info["device"]
        self._ranks = tuple(info["ranks"])
        self._hierarchy = tuple(info["hierarchy"])

    @classmethod
    def of(cls, value):
        if isinstance(value, placement):
            return value
        if isinstance(value, str):
            return cls(value)
        raise ValueError(f"placement {value!r} must be a placement or text such as 'cpu:0-3 [2,2]'")

    @property
    def type(self):
        return self._device

    device_type = type

    @property
    def ranks(self):
        """Ranks in mesh order, nested to the mesh shape (as OneFlow returns them)."""
        def nest(flat, shape):
            if len(shape) == 1:
                return list(flat)
            step = len(flat) // shape[0]
            return [nest(flat[i * step:(i + 1) * step], shape[1:]) for i in range(shape[0])]
        return nest(list(self._ranks), list(self._hierarchy))

    @property
    def hierarchy(self):
        return self._hierarchy

    @property
    def mesh_shape(self):
        return self._hierarchy

    @property
    def ndim(self):
        return len(self._hierarchy)

    @property
    def size(self):
        return len(self._ranks)

    def __eq__(self, other):
        return isinstance(other, placement) and self._text == other._text

    def __hash__(self):
        return hash(self._text)

    def __reduce__(self):
        return (placement, (self._text,))

    def __str__(self):
        return self._text

    def __repr__(self):
        return f"oneflow_sbp.placement({self._text!r})"
