"""The OneFlow-named functions against numpy, on a [2,2] mesh."""
import numpy as np
import pytest

import oneflow_sbp as ofs
import oneflow_sbp.nn.functional as F
from oneflow_sbp import Replicate, Shard


def arange(*shape):
    n = int(np.prod(shape))
    return ((np.arange(n) * 0.37 - n / 7) / 10).astype(np.float32).reshape(shape)


@pytest.fixture()
def x(session, mesh22):
    return ofs.tensor(arange(4, 6), placement=mesh22, sbp=[Shard(0), Replicate()])


def close(t, ref, **kw):
    np.testing.assert_allclose(t.numpy(), ref, rtol=kw.get("rtol", 1e-5), atol=kw.get("atol", 1e-6))


def test_shape_functions(x):
    a = arange(4, 6)
    close(ofs.flatten(ofs.reshape(x, (2, 2, 6)), 1), a.reshape(2, 12))
    close(ofs.unsqueeze(x, 1), a[:, None, :])
    close(ofs.squeeze(ofs.unsqueeze(x, 0), 0), a)
    close(ofs.narrow(x, 1, 2, 3), a[:, 2:5])
    close(ofs.permute(x, 1, 0), a.T)
    close(x.T, a.T)
    close(x.t(), a.T)
    close(ofs.view(x, (-1,)), a.reshape(-1))
    close(ofs.cat([x, x], dim=1), np.concatenate([a, a], 1))
    close(ofs.tril(ofs.reshape(x, (4, 6))), np.tril(a))


def test_elementwise_and_reductions(x):
    a = arange(4, 6)
    close(x - 1.0, a - 1)
    close(x - x, a * 0)
    close(x ** 2, a ** 2, rtol=1e-4)
    close(-x, -a)
    close(2.0 * x, 2 * a)
    close(ofs.sigmoid(x), 1 / (1 + np.exp(-a)))
    close(ofs.tanh(x), np.tanh(a))
    close(ofs.exp(x), np.exp(a))
    close(ofs.log_softmax(x), a - np.log(np.exp(a).sum(-1, keepdims=True)), rtol=1e-4)
    close(ofs.max(x, dim=1), a.max(1))
    close(ofs.min(x, dim=0, keepdim=True), a.min(0, keepdims=True))
    close(x.sum(1), a.sum(1))
    close(ofs.where(ofs.cast(ofs.relu(x), "bool"), x, ofs.zeros_like(x)), np.where(a > 0, a, 0))
    assert ofs.cast(x, "f64").dtype == "f64"


def test_nn_functional(session, mesh22):
    a, w, b = arange(4, 6), arange(5, 6), arange(5)
    x = ofs.tensor(a, placement=mesh22, sbp=[Shard(0), Replicate()])
    wt = ofs.tensor(w, placement=mesh22, sbp=[Replicate(), Shard(0)])
    bt = ofs.tensor(b, placement=mesh22, sbp=[Replicate(), Shard(0)])
    close(F.linear(x, wt, bt), a @ w.T + b, rtol=1e-4)
    table = ofs.tensor(arange(10, 6), placement=mesh22, sbp=[Replicate(), Shard(1)])
    ids = ofs.tensor(np.array([[1, 3], [9, 0]]), placement=mesh22, sbp=[Shard(0), Replicate()])
    close(F.embedding(ids, table), arange(10, 6)[[[1, 3], [9, 0]]])
    g = ofs.tensor(np.ones(6, np.float32), placement=mesh22, sbp=[Replicate(), Replicate()])
    z = ofs.tensor(np.zeros(6, np.float32), placement=mesh22, sbp=[Replicate(), Replicate()])
    mu, var = a.mean(-1, keepdims=True), a.var(-1, keepdims=True)
    close(F.layer_norm(x, (6,), g, z, eps=1e-5), (a - mu) / np.sqrt(var + 1e-5), rtol=1e-4, atol=1e-5)
    close(F.layer_norm(x, (6,)), (a - mu) / np.sqrt(var + 1e-5), rtol=1e-4, atol=1e-5)
    with pytest.raises(NotImplementedError):
        F.layer_norm(x, (6,), weight=g)
    close(F.rms_norm(x, g, [6]), a / np.sqrt((a * a).mean(-1, keepdims=True) + 1e-5), rtol=1e-4)
    assert F.dropout(x, p=0.5, training=False) is x
    d = F.dropout(x, p=0.5, seed=3).numpy()
    assert set(np.unique(np.round(d / np.where(a == 0, 1, a), 4))) <= {0.0, 2.0}
    labels = ofs.tensor(np.array([0, 5, 2, 1]), placement=mesh22, sbp=[Shard(0), Replicate()])
    lse = np.log(np.exp(a).sum(-1))
    close(F.cross_entropy(x, labels), (lse - a[np.arange(4), [0, 5, 2, 1]]).mean(), rtol=1e-4)
    with pytest.raises(ValueError, match="scalar"):
        ofs.add(x, "1")


def test_encoder_ops(session, mesh22):
    rng = np.random.default_rng(0)
    x = rng.standard_normal((2, 5, 6)).astype(np.float32)
    mask = np.array([[1, 1, 1, 0, 0], [1, 1, 1, 1, 1]])
    tx = ofs.tensor(x, placement=mesh22, sbp=[Shard(0), Replicate()])
    tm = ofs.tensor(mask, placement=mesh22, sbp=[Shard(0), Replicate()])
    pooled = F.masked_mean_pool(tx, tm)
    ref = (x * mask[..., None]).sum(1) / mask.sum(1, keepdims=True)
    close(pooled, ref, rtol=1e-5)
    close(F.normalize(pooled), ref / np.linalg.norm(ref, axis=-1, keepdims=True), rtol=1e-5)
    q = rng.standard_normal((2, 2, 5, 3)).astype(np.float32)
    tq = ofs.tensor(q, placement=mesh22, sbp=[Shard(0), Shard(1)])
    out = F.scaled_dot_product_attention(tq, tq, tq, key_padding_mask=tm).numpy()
    s = q @ q.transpose(0, 1, 3, 2) / np.sqrt(3)
    s = np.where(mask[:, None, None, :] != 0, s, -np.inf)
    w = np.exp(s - s.max(-1, keepdims=True))
    w /= w.sum(-1, keepdims=True)
    np.testing.assert_allclose(out, w @ q, rtol=1e-4, atol=1e-5)
    with pytest.raises(NotImplementedError):
        F.normalize(pooled, p=1)


def test_einsum(session, mesh22):
    a = arange(2, 3, 4)
    w = arange(4, 5)
    ta = ofs.tensor(a, placement=mesh22, sbp=[Shard(0), Replicate()])
    tw = ofs.tensor(w, placement=mesh22, sbp=[Replicate(), Shard(1)])
    close(ofs.einsum("bmk,kn->bmn", ta, tw), np.einsum("bmk,kn->bmn", a, w), rtol=1e-5)
    with pytest.raises(ValueError, match="equation"):
        ofs.einsum("bmk,kn", ta, tw)
