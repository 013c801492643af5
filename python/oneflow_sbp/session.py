"""Which ranks this Python process drives.

Embedded (the default): one Python thread drives every rank; ranks are
threads inside the engine, and the world grows to the largest rank a
placement names. Launched (``sbp launch --nproc_per_node=N -- python3 x.py``):
``init()`` joins the launcher's Gloo world and this process is one rank."""

import atexit
import contextlib
import os

from . import _C

__all__ = ["init", "current_session", "is_launched", "rank", "world_size", "no_grad",
           "enable_grad", "is_grad_enabled", "set_cost_policy", "get_cost_policy", "shutdown"]

_session = None

_LAUNCH_VARS = ("RANK", "WORLD_SIZE", "MASTER_ADDR", "MASTER_PORT", "OFS_JOB_SECRET")


def is_launched():
    """True when the launcher's environment (RANK, WORLD_SIZE, MASTER_ADDR, MASTER_PORT and the
    job secret OFS_JOB_SECRET) is set: a stray RANK alone does not count."""
    return all(v in os.environ for v in _LAUNCH_VARS)


def init(world_size=None, timeout=60.0, launched=None):
    """(Re)starts the session. Under ``sbp launch`` it joins the Gloo world the
    launcher describes; otherwise it starts ``world_size`` rank threads (the
    world grows on demand, so this is optional). Tensors of an earlier
    session cannot mix with the new one."""
    global _session
    if launched is None:
        launched = is_launched()
    if _session is not None:
        _session.close()
        _session = None
    _session = _C.Session(int(world_size or 1), float(timeout), bool(launched))
    return _session


def current_session():
    return _session or init()


def shutdown():
    """Stops the rank threads (done at exit as well)."""
    global _session
    if _session is not None:
        _session.close()
        _session = None


atexit.register(shutdown)


def rank():
    """This process's rank (0 when one process drives every rank)."""
    s = current_session()
    return s.local_ranks[0] if s.launched else 0


def world_size():
    return current_session().world_size


@contextlib.contextmanager
def _grad_mode(on):
    s = current_session()
    prev = s.grad_enabled
    s.grad_enabled = on
    try:
        yield
    finally:
        s.grad_enabled = prev


def no_grad():
    """Ops inside record nothing for autograd (``torch.no_grad``/``flow.no_grad``)."""
    return _grad_mode(False)


def enable_grad():
    return _grad_mode(True)


def is_grad_enabled():
    return current_session().grad_enabled


def set_cost_policy(name):
    """Every later op chooses its output layout under this cost policy ("oneflow", "planned")."""
    current_session().set_cost_policy(name)


def get_cost_policy():
    return current_session().cost_policy
