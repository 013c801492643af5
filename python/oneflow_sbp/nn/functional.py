"""``oneflow_sbp.nn.functional``: OneFlow's ``flow.nn.functional`` names that the catalog has."""

from ..ops import gelu, log_softmax, relu, sigmoid, silu, softmax, tanh  # noqa: F401
from ..tensor import apply

__all__ = ["relu", "gelu", "silu", "sigmoid", "tanh", "softmax", "log_softmax", "linear",
           "embedding", "layer_norm", "rms_norm", "dropout", "scaled_dot_product_attention",
           "sparse_softmax_cross_entropy", "cross_entropy", "rotary_embedding", "fast_gelu", "mish",
           "softplus", "normalize", "masked_mean_pool"]


def fast_gelu(x):
    return apply("fast_gelu", x)


def mish(x):
    return apply("mish", x)


def softplus(x):
    return apply("softplus", x)


def linear(x, weight, bias=None):
    """x @ weight.T + bias with weight [out, in], as flow.nn.functional.linear."""
    y = apply("broadcast_matmul" if x.ndim > 2 else "matmul", x, weight, transpose_b=True)
    return y if bias is None else apply("bias_add", y, bias, axis=y.ndim - 1)


def embedding(input, weight, padding_idx=None):  # noqa: A002 (OneFlow's argument name)
    return apply("embedding", weight, input, padding_idx=-1 if padding_idx is None else padding_idx)


def layer_norm(x, normalized_shape, weight=None, bias=None, eps=1e-5):
    """flow.nn.functional.layer_norm; the catalog op takes (x, beta, gamma)."""
    begin = x.ndim - len(tuple(normalized_shape))
    attrs = dict(begin_norm_axis=begin, begin_params_axis=begin, epsilon=float(eps))
    if weight is None and bias is None:
        outs = apply("layer_norm", x, center=False, scale=False, **attrs)
    elif weight is not None and bias is not None:
        outs = apply("layer_norm", x, bias, weight, **attrs)
    else:
        raise NotImplementedError("layer_norm: give both weight and bias, or neither")
    return outs[0]


def rms_norm(x, weight, normalized_shape, eps=1e-5):
    outs = apply("rms_norm", x, weight, normalized_shape=list(normalized_shape), epsilon=float(eps))
    return outs[0] if isinstance(outs, tuple) else outs


def dropout(x, p=0.5, training=True, seed=0):
    if not training or p == 0:
        return x
    outs = apply("dropout", x, rate=float(p), seed=int(seed))
    return outs[0] if isinstance(outs, tuple) else outs


def scaled_dot_product_attention(query, key, value, is_causal=False, scale=None,
                                 key_padding_mask=None):
    """softmax(q k^T * scale) v over [B, H, S, D]; ``key_padding_mask`` [B, Sk]
    (bool or int, nonzero = attend) gives padded keys no weight."""
    attrs = dict(causal=bool(is_causal))
    if scale is not None:
        attrs["scale"] = float(scale)
    if key_padding_mask is None:
        return apply("scaled_dot_product_attention", query, key, value, **attrs)
    return apply("scaled_dot_product_attention", query, key, value, key_padding_mask, **attrs)


def normalize(x, p=2.0, dim=-1, eps=1e-12):
    """x / max(||x||_2 along dim, eps) (torch.nn.functional.normalize, p=2 only)."""
    if p != 2:
        raise NotImplementedError("normalize: only p=2 (l2_normalize)")
    return apply("l2_normalize", x, axis=int(dim), epsilon=float(eps))


def masked_mean_pool(x, mask):
    """Mean over the tokens ``mask`` keeps: x [B, S, H], mask [B, S] -> [B, H]
    (sentence-transformers' mean pooling)."""
    return apply("masked_mean_pool", x, mask)


def rotary_embedding(x, cos, sin):
    return apply("rotary_embedding", x, cos, sin)


def sparse_softmax_cross_entropy(logits, labels):
    """Per-row cross-entropy of logits [N, C] against int labels [N]
    (flow.nn.functional.sparse_softmax_cross_entropy); the model-parallel
    form, so the vocabulary may stay split."""
    outs = apply("sparse_softmax_cross_entropy_ms", logits, labels, depth=logits.shape[-1])
    return outs[1]


def cross_entropy(logits, labels, reduction="mean"):
    per_row = sparse_softmax_cross_entropy(logits, labels)
    if reduction == "none":
        return per_row
    return apply("reduce_mean" if reduction == "mean" else "reduce_sum", per_row, axis=[0])
