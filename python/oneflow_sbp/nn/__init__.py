"""``oneflow_sbp.nn``: the functional ops (``nn.functional``), as in OneFlow."""
from . import functional  # noqa: F401
