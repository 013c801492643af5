"""Ops written in Python: a shape function, a 1-D SBP rule written with
OneFlow's builder, and a numpy kernel. The engine expands the rule to N-D
meshes, filters, ranks, boxes and runs the op like a built-in."""

from . import _C

__all__ = ["register_op", "verify", "SbpContext"]


class _Arg:
    __slots__ = ("is_input", "name", "index")

    def __init__(self, is_input, name, index=0):
        self.is_input, self.name, self.index = is_input, name, index

    def __repr__(self):
        return f"{self.name}_{self.index}"


class _Builder:
    def __init__(self, ctx):
        self._ctx = ctx
        self._entries = []

    def _args(self, args):
        return [args] if isinstance(args, _Arg) else list(args)

    def split(self, args, axis):
        self._entries += [(a.is_input, a.name, a.index, "S", int(axis)) for a in self._args(args)]
        return self

    def broadcast(self, args):
        self._entries += [(a.is_input, a.name, a.index, "B", 0) for a in self._args(args)]
        return self

    def partial_sum(self, args):
        self._entries += [(a.is_input, a.name, a.index, "P", 0) for a in self._args(args)]
        return self

    def build(self):
        self._ctx._signatures.append(list(self._entries))
        return self


class SbpContext:
    """What an SBP rule sees (OneFlow's user_op::SbpContext)."""

    def __init__(self, input_names, output_names, descs, attrs, parallel_num):
        self._in = [_Arg(True, n) for n in input_names]
        self._out = [_Arg(False, n) for n in output_names]
        self._descs = dict(zip(input_names, descs))
        self.attrs = attrs
        self.parallel_num = parallel_num
        self._signatures = []

    def inputs(self):
        return list(self._in)

    def outputs(self):
        return list(self._out)

    def input(self, name):
        return next(a for a in self._in if a.name == name)

    def output(self, name):
        return next(a for a in self._out if a.name == name)

    def input_shape(self, name):
        return tuple(self._descs[name][0])

    def builder(self):
        return _Builder(self)

    NewBuilder = builder


class ShapeContext:
    """What a shape function sees: each input's shape and dtype, and the attributes."""

    def __init__(self, input_names, descs, attrs):
        self.input_shapes = {n: tuple(d[0]) for n, d in zip(input_names, descs)}
        self.input_dtypes = {n: d[1] for n, d in zip(input_names, descs)}
        self.attrs = attrs

    def input_shape(self, name):
        return self.input_shapes[name]

    def input_dtype(self, name):
        return self.input_dtypes[name]


def register_op(name, inputs, outputs, infer_shape, sbp_rule, kernel, attrs=None):
    """Registers ``name``. ``infer_shape(ctx)`` returns one (shape, dtype) per
    output; ``sbp_rule(ctx)`` emits 1-D signatures with
    ``ctx.builder().split(ctx.inputs(), 0).split(ctx.outputs(), 0).build()``;
    ``kernel(*local_arrays, **attrs)`` returns the local output array(s) of one
    rank. ValueError if the name is taken."""
    inputs, outputs = list(inputs), list(outputs)

    def shape_fn(descs, attr_values):
        r = infer_shape(ShapeContext(inputs, descs, attr_values))
        if len(outputs) == 1 and isinstance(r, tuple) and len(r) == 2 and isinstance(r[1], str):
            r = [r]
        return [(tuple(s), str(d)) for s, d in r]

    def sbp_fn(descs, attr_values, parallel_num):
        ctx = SbpContext(inputs, outputs, descs, attr_values, parallel_num)
        sbp_rule(ctx)
        return ctx._signatures

    def kernel_fn(arrays, attr_values, parallel_id):
        r = kernel(*arrays, **attr_values)
        return list(r) if isinstance(r, (tuple, list)) else [r]

    _C.register_op(name, inputs, outputs, dict(attrs or {}), shape_fn, sbp_fn, kernel_fn)


def verify(op, mesh=None):
    """Runs ``op`` under every candidate signature on sharded ranks and compares
    with one rank (``sbp verify``). Returns a dict with ``ok``, ``outcome``,
    ``checked`` and the text ``report``."""
    return _C.verify(op, list(mesh or []))
