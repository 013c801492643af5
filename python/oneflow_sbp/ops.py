"""Ops with OneFlow's names over the catalog (``apply`` reaches every op)."""

from . import session as _sessions
from .tensor import Tensor, apply

__all__ = [
    "matmul", "relu", "gelu", "silu", "sigmoid", "tanh", "exp", "log", "sqrt", "rsqrt", "square",
    "abs", "neg", "softmax", "log_softmax", "sum", "mean", "max", "min", "reshape", "view",
    "transpose", "permute", "add", "sub", "mul", "div", "cat", "where", "zeros_like", "cast",
    "flatten", "unsqueeze", "squeeze", "pow", "narrow", "tril", "einsum",
]

_UNARY = ["relu", "gelu", "silu", "sigmoid", "tanh", "exp", "log", "sqrt", "rsqrt", "square", "abs",
          "softmax", "log_softmax", "zeros_like"]


def _unary(name):
    def f(x):  # the hot path: straight to the native call
        return (_sessions._session or _sessions.init()).call(name, x)
    f.__name__ = name
    f.__doc__ = f"The catalog op '{name}' on a global tensor."
    return f


for _n in _UNARY:
    globals()[_n] = _unary(_n)


def neg(x):
    return apply("negative", x)


def matmul(a, b, transpose_a=False, transpose_b=False, alpha=1.0):
    """2-D x 2-D: matmul; N-D x 2-D: broadcast_matmul; N-D x N-D: batch_matmul (as flow.matmul)."""
    # Defaults are left out: the op's own defaults, and one cached call fewer
    # to convert on the hot path.
    attrs = {}
    if transpose_a:
        attrs["transpose_a"] = True
    if transpose_b:
        attrs["transpose_b"] = True
    if alpha != 1.0:
        attrs["alpha"] = float(alpha)
    if a.ndim == 2 and b.ndim == 2:
        return apply("matmul", a, b, **attrs)
    if b.ndim == 2:
        return apply("broadcast_matmul", a, b, **attrs)
    return apply("batch_matmul", a, b, **attrs)


def _axes(x, dim):
    if dim is None:
        return list(range(x.ndim))
    if isinstance(dim, int):
        dim = [dim]
    return [d % x.ndim for d in dim]


def _reduction(op, name):
    def f(x, dim=None, keepdim=False):
        return apply(op, x, axis=_axes(x, dim), keepdims=keepdim)
    f.__name__ = name
    f.__doc__ = f"flow.{name}(x, dim=None, keepdim=False) through the catalog op '{op}'."
    return f


sum = _reduction("reduce_sum", "sum")  # noqa: A001 (OneFlow's names)
mean = _reduction("reduce_mean", "mean")
max = _reduction("reduce_max", "max")  # noqa: A001
min = _reduction("reduce_min", "min")  # noqa: A001


def reshape(x, shape):
    shape = list(shape)
    if -1 in shape:
        known = 1
        for d in shape:
            if d != -1:
                known *= d
        shape[shape.index(-1)] = x.numel() // known if known else 0
    return apply("reshape", x, shape=shape)


view = reshape


def flatten(x, start_dim=0, end_dim=-1):
    return apply("flatten", x, start_dim=start_dim, end_dim=end_dim)


def permute(x, *dims):
    perm = list(dims[0]) if len(dims) == 1 and not isinstance(dims[0], int) else list(dims)
    return apply("transpose", x, perm=perm)


def transpose(x, dim0, dim1):
    perm = list(range(x.ndim))
    perm[dim0], perm[dim1] = perm[dim1], perm[dim0]
    return apply("transpose", x, perm=perm)


def unsqueeze(x, dim):
    return apply("expand_dims", x, axis=dim)


def squeeze(x, dim):
    return apply("squeeze", x, axes=[dim] if isinstance(dim, int) else list(dim))


def narrow(x, dim, start, length):
    return apply("narrow", x, dim=dim, start=start, length=length)


def tril(x, diagonal=0):
    return apply("tril", x, diagonal=diagonal)


def _scalar_attrs(v):
    if isinstance(v, bool) or not isinstance(v, (int, float)):
        raise ValueError(f"scalar operand {v!r} must be an int or a float")
    if isinstance(v, int):
        return dict(has_int_operand=True, has_float_operand=False, int_operand=v, float_operand=0.0)
    return dict(has_int_operand=False, has_float_operand=True, int_operand=0, float_operand=v)


def _binary(tensor_op, scalar_op):
    def f(a, b):
        if isinstance(b, Tensor):
            if not isinstance(a, Tensor):
                raise ValueError(f"{tensor_op}: a scalar on the left of a tensor is not supported")
            return apply(tensor_op, a, b)
        return apply(scalar_op, a, **_scalar_attrs(b))
    return f


add = _binary("broadcast_add", "scalar_add")
mul = _binary("broadcast_mul", "scalar_mul")
div = _binary("broadcast_div", "scalar_div")
pow = _binary("broadcast_pow", "scalar_pow")  # noqa: A001


def sub(a, b):
    if isinstance(b, Tensor):
        return apply("broadcast_sub", a, b)
    return apply("scalar_add", a, **_scalar_attrs(-b))


def einsum(equation, *operands):
    """torch.einsum / flow.einsum: the contraction the equation names ("bmk,kn->bmn")."""
    return apply("einsum", *operands, equation=str(equation))


def cat(tensors, dim=0):
    return apply("cat", *tensors, axis=dim)


def where(cond, x, y):
    return apply("where", cond, x, y)


def cast(x, dtype):
    return apply("cast", x, dtype=str(dtype))


def _install():
    T = Tensor
    T.__add__ = add
    T.__radd__ = lambda a, b: add(a, b)
    T.__sub__ = sub
    T.__mul__ = mul
    T.__rmul__ = lambda a, b: mul(a, b)
    T.__truediv__ = div
    T.__matmul__ = matmul
    T.__neg__ = neg
    T.__pow__ = pow
    for name in _UNARY + ["sum", "mean", "max", "min", "matmul", "reshape", "view", "flatten",
                         "permute", "transpose", "unsqueeze", "squeeze", "narrow", "tril"]:
        setattr(T, name, globals()[name])
    T.t = lambda x: transpose(x, 0, 1)
    T.T = property(lambda x: permute(x, list(reversed(range(x.ndim)))))


_install()
