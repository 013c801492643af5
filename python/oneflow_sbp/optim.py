"""``oneflow_sbp.optim``: SGD and Adam over global parameters, updating each
parameter's shards in place with the catalog's update ops (every parameter
keeps its layout, as OneFlow's optimizers do)."""

import math

from .session import no_grad
from .tensor import apply

__all__ = ["SGD", "Adam"]


class _Optimizer:
    def __init__(self, params):
        self.params = list(params)
        if not self.params:
            raise ValueError("optimizer got an empty parameter list")
        for p in self.params:
            if not p.requires_grad:
                raise ValueError(f"parameter {p!r} does not require grad")

    def zero_grad(self, set_to_none=True):
        for p in self.params:
            p.grad = None


class SGD(_Optimizer):
    def __init__(self, params, lr=1e-3, weight_decay=0.0):
        super().__init__(params)
        self.lr = float(lr)
        self.weight_decay = float(weight_decay)

    def step(self):
        with no_grad():
            for p in self.params:
                g = p.grad
                if g is None:
                    continue
                apply("sgd_update", p.detach(), g, learning_rate=self.lr,
                      weight_decay=self.weight_decay)


class Adam(_Optimizer):
    def __init__(self, params, lr=1e-3, betas=(0.9, 0.999), eps=1e-8, weight_decay=0.0):
        super().__init__(params)
        self.lr = float(lr)
        self.betas = (float(betas[0]), float(betas[1]))
        self.eps = float(eps)
        self.weight_decay = float(weight_decay)
        self.state = {}
        self.step_count = 0

    def step(self):
        self.step_count += 1
        b1, b2 = self.betas
        with no_grad():
            for i, p in enumerate(self.params):
                g = p.grad
                if g is None:
                    continue
                if i not in self.state:
                    self.state[i] = (apply("zeros_like", p.detach()), apply("zeros_like", p.detach()))
                m, v = self.state[i]
                apply("adam_update", p.detach(), g, m, v, learning_rate=self.lr, beta1=b1, beta2=b2,
                      epsilon=self.eps, weight_decay=self.weight_decay,
                      bias_correction1=1 - math.pow(b1, self.step_count),
                      bias_correction2=1 - math.pow(b2, self.step_count))
