#!/usr/bin/env python3
"""The `sbp demo` LLaMA block, written with the Python package.

Token embedding -> RMSNorm -> attention (q/k/v projections, rotary
embedding, causal scaled dot-product attention, output projection) ->
residual add -> RMSNorm -> SwiGLU MLP -> residual add -> final RMSNorm ->
vocabulary projection -> cross-entropy, trained with Adam. Only the inputs
and the weights are marked (Megatron style: data parallel on mesh axis 0,
column/row-parallel weights on axis 1); every other layout is the engine's
choice. Weights and batch come from the engine's seeded streams, so the
losses equal `sbp demo --mesh=2,2 --steps=3` (same seed, same ops).

    python3 llama_block.py --mesh=2,2 --steps=3
"""
import argparse
import math

import numpy as np

import oneflow_sbp as ofs
import oneflow_sbp.nn.functional as F
from oneflow_sbp import sbp
from oneflow_sbp.random import seeded_ints, seeded_uniform

B, S = sbp.broadcast, sbp.split


class Config:
    batch, seq, hidden, heads, ffn, vocab, layers = 4, 16, 64, 4, 128, 128, 1
    learning_rate = 1e-2


def marking(mesh):
    """(data, replicated, column, row, vocab_rows) layouts for a 1- or 2-axis mesh."""
    if len(mesh) == 1:
        return [S(0)], [B], [B], [B], [B]
    return [S(0), B], [B, B], [B, S(1)], [B, S(0)], [B, S(0)]


class LlamaBlock:
    def __init__(self, cfg, placement, seed):
        self.cfg, self.placement, self.seed = cfg, placement, seed
        self.data, self.rep, self.col, self.row, self.vocab_rows = marking(placement.hierarchy)
        self.params = {}
        h, f = cfg.hidden, cfg.ffn
        self.param("embedding", (cfg.vocab, h), self.vocab_rows, 1.0, 0.0)
        for l in range(cfg.layers):
            p = f"layer{l}."
            self.param(p + "attn_norm", (h,), self.rep, 0.1, 1.0)
            for w in ("wq", "wk", "wv"):
                self.param(p + w, (h, h), self.col, 1 / math.sqrt(h), 0.0)
            self.param(p + "wo", (h, h), self.row, 1 / math.sqrt(h), 0.0)
            self.param(p + "mlp_norm", (h,), self.rep, 0.1, 1.0)
            self.param(p + "w_gate", (h, f), self.col, 1 / math.sqrt(h), 0.0)
            self.param(p + "w_up", (h, f), self.col, 1 / math.sqrt(h), 0.0)
            self.param(p + "w_down", (f, h), self.row, 1 / math.sqrt(f), 0.0)
        self.param("final_norm", (h,), self.rep, 0.1, 1.0)
        self.param("lm_head", (h, cfg.vocab), self.col, 1 / math.sqrt(h), 0.0)
        self.set_batch()

    def param(self, name, shape, layout, scale, offset):
        n = int(np.prod(shape))
        values = (offset + scale * seeded_uniform(self.seed, name, n)).astype(np.float32)
        self.params[name] = ofs.tensor(values.reshape(shape), placement=self.placement, sbp=layout,
                                       requires_grad=True)

    def set_batch(self):
        c = self.cfg
        draws = seeded_ints(self.seed, "batch", c.batch * c.seq + c.batch, c.vocab)
        ids = draws[:c.batch * c.seq].reshape(c.batch, c.seq)
        labels = np.concatenate([ids[:, 1:], draws[c.batch * c.seq:].reshape(c.batch, 1)], axis=1)
        hd = c.hidden // c.heads
        cos = np.zeros((c.seq, hd), np.float32)
        sin = np.zeros((c.seq, hd), np.float32)
        for pos in range(c.seq):
            for i in range(hd // 2):
                theta = pos * math.pow(10000.0, -2.0 * i / hd)
                cos[pos, [i, i + hd // 2]] = math.cos(theta)
                sin[pos, [i, i + hd // 2]] = math.sin(theta)
        self.ids = ofs.tensor(ids, placement=self.placement, sbp=self.data)
        self.labels = ofs.tensor(labels.reshape(-1), placement=self.placement, sbp=self.data)
        self.cos = ofs.tensor(cos, placement=self.placement, sbp=self.rep)
        self.sin = ofs.tensor(sin, placement=self.placement, sbp=self.rep)

    def layer(self, l, h):
        c, P = self.cfg, self.params
        p = f"layer{l}."
        hd = c.hidden // c.heads
        n1 = F.rms_norm(h, P[p + "attn_norm"], [c.hidden])
        q, k, v = [ofs.matmul(n1, P[p + w]).reshape((c.batch, c.seq, c.heads, hd)).permute(0, 2, 1, 3)
                   for w in ("wq", "wk", "wv")]
        q = F.rotary_embedding(q, self.cos, self.sin)
        k = F.rotary_embedding(k, self.cos, self.sin)
        a = F.scaled_dot_product_attention(q, k, v, is_causal=True)
        a = a.permute(0, 2, 1, 3).reshape((c.batch, c.seq, c.hidden))
        h = ofs.apply("add_n", h, ofs.matmul(a, P[p + "wo"]))
        n2 = F.rms_norm(h, P[p + "mlp_norm"], [c.hidden])
        g = F.silu(ofs.matmul(n2, P[p + "w_gate"]))
        m = g * ofs.matmul(n2, P[p + "w_up"])
        return ofs.apply("add_n", h, ofs.matmul(m, P[p + "w_down"]))

    def loss(self):
        c = self.cfg
        h = F.embedding(self.ids, self.params["embedding"])
        for l in range(c.layers):
            h = self.layer(l, h)
        n = F.rms_norm(h, self.params["final_norm"], [c.hidden])
        logits = ofs.matmul(n, self.params["lm_head"]).reshape((c.batch * c.seq, c.vocab))
        return F.cross_entropy(logits, self.labels)


def train(mesh=(2, 2), steps=3, seed=1, cost="oneflow"):
    n = int(np.prod(mesh))
    placement = ofs.placement(f"cpu:0-{n - 1} [{','.join(str(d) for d in mesh)}]")
    ofs.set_cost_policy(cost)
    model = LlamaBlock(Config(), placement, seed)
    opt = ofs.optim.Adam(model.params.values(), lr=Config.learning_rate)
    losses = []
    for _ in range(steps):
        loss = model.loss()
        losses.append(loss.item())
        loss.backward()
        opt.step()
        opt.zero_grad()
    return losses


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--mesh", default="2,2")
    ap.add_argument("--steps", type=int, default=3)
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--cost", default="oneflow")
    a = ap.parse_args()
    losses = train(tuple(int(d) for d in a.mesh.split(",")), a.steps, a.seed, a.cost)
    for step, loss in enumerate(losses):
        print(f"step {step}: loss {loss:.6f}")


if __name__ == "__main__":
    main()
