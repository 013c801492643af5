"""oneflow_sbp: OneFlow-style SBP inference, exact boxing and global tensors.

    import numpy as np
    import oneflow_sbp as ofs
    from oneflow_sbp import sbp

    p = ofs.placement("cpu", ranks=[[0, 1], [2, 3]])
    x = ofs.tensor(np.ones((8, 6), np.float32), placement=p, sbp=[sbp.split(0), sbp.broadcast])
    y = ofs.relu(x)          # the engine chooses y's layout
    y.sbp, y.numpy()
"""

from . import _C  # noqa: F401
from . import checkpoint, nn, optim, sbp  # noqa: F401
from .checkpoint import load_safetensors
from .custom_op import register_op, verify
from .ops import *  # noqa: F401,F403
from .placement import placement
from .rules import BoxingPlan, InferResult, cost_policies, infer, ops, plan_boxing
from .sbp import Partial, Replicate, Shard
from .session import (enable_grad, get_cost_policy, init, is_grad_enabled, is_launched, no_grad,
                      rank, set_cost_policy, shutdown, world_size)
from .spmd_rules import DistTensorSpec, get_spmd_rule
from .tensor import Tensor, apply, from_dlpack, from_local, tensor
from . import random  # noqa: F401

__version__ = "0.1.0"
