"""Global tensors: ``tensor``, ``from_local``, ``apply`` and the Tensor methods."""

import numpy as np

from . import _C
from .placement import placement as _placement
from .sbp import Replicate, parse_nd_sbp, to_nd_sbp_text
from . import session as _sessions
from .session import current_session

__all__ = ["Tensor", "tensor", "from_local", "from_dlpack", "apply"]

Tensor = _C.Tensor


def tensor(data, placement=None, sbp=None, requires_grad=False, dtype=None, local=False):
    """A global tensor from ``data`` (a numpy array or anything numpy reads).

    Embedded: ``data`` is the full logical array and is scattered to the ranks.
    Launched: each process passes the full array, or with ``local=True`` its
    own shard (the logical shape assumes even splits)."""
    if placement is None or sbp is None:
        raise ValueError("tensor() needs placement= and sbp= (e.g. placement('cpu', ranks=[0, 1]), "
                         "sbp=sbp.split(0))")
    p = str(_placement.of(placement))
    nd = to_nd_sbp_text(sbp)
    s = current_session()
    if local:
        return from_local(data, placement, sbp, requires_grad=requires_grad)
    arr = np.asarray(data)
    if dtype is not None and str(dtype) not in ("bf16", "bfloat16"):
        arr = arr.astype(np.dtype(_numpy_name(dtype)), copy=False)
        dtype = None
    elif arr.dtype == np.float64 and dtype is None and not isinstance(data, np.ndarray):
        arr = arr.astype(np.float32)  # Python floats become f32, as torch and oneflow do
    return s.tensor(arr, p, nd, requires_grad, None if dtype is None else str(dtype))


def from_local(local, placement, sbp, shape=None, requires_grad=False):
    """A global tensor from shards (DTensor.from_local). Embedded: a list with
    one array per rank of the world (None outside the placement); launched:
    this process's array."""
    s = current_session()
    arrays = [local] if s.launched else list(local)
    arrays = [None if a is None else np.asarray(a) for a in arrays]
    return s.from_local(arrays, str(_placement.of(placement)), to_nd_sbp_text(sbp),
                        None if shape is None else tuple(shape), requires_grad)


def from_dlpack(obj, placement, sbp, requires_grad=False):
    """A global tensor from any DLPack producer (torch, jax, numpy): read
    without a copy by numpy, then scattered."""
    return tensor(np.from_dlpack(obj), placement, sbp, requires_grad=requires_grad)


def apply(op, *tensors, **attrs):
    """Any catalog op by name; one output returns a Tensor, several a tuple."""
    return (_sessions._session or _sessions.init()).call(op, *tensors, **attrs)


def _numpy_name(dtype):
    names = {"f16": "float16", "f32": "float32", "f64": "float64", "i8": "int8", "i32": "int32",
             "i64": "int64", "u8": "uint8", "bool": "bool"}
    d = str(np.dtype(dtype)) if not isinstance(dtype, str) else dtype
    return names.get(d, d)


# ---- Tensor methods -------------------------------------------------------

def _sbp(self):
    return parse_nd_sbp(self._nd_sbp)


def _placement_of(self):
    return _placement(self._placement)


def _to_local(self, rank=None):
    """One rank's shard as a read-only numpy view (no copy); ``rank`` defaults to
    this process's rank when launched. None on a rank outside the placement."""
    s = current_session()
    if rank is None:
        if not s.launched:
            raise ValueError("to_local(rank): name the rank whose shard you want (every rank runs "
                             "in this process)")
        rank = s.local_ranks[0]
    return self._to_local(int(rank))


def _to_global(self, placement=None, sbp=None):
    """The same logical tensor laid out as ``sbp`` on ``placement`` (the exact planner's boxing)."""
    p = self._placement if placement is None else str(_placement.of(placement))
    nd = self._nd_sbp if sbp is None else to_nd_sbp_text(sbp)
    return self._redistribute(p, nd)


def _backward(self, gradient=None):
    self._backward(gradient)


def _ndim(self):
    return self.ndim


def _size(self, dim=None):
    return self.shape if dim is None else self.shape[dim]


def _numel(self):
    n = 1
    for d in self.shape:
        n *= d
    return n


def _array(self, dtype=None, copy=None):
    a = self.numpy()
    return a if dtype is None else a.astype(dtype)


_KDLCPU = 1


def _dlpack(self, stream=None, *, max_version=None, dl_device=None, copy=None):
    """DLPack export (the array API's protocol, with its 2023.12 keywords).

    The data is on the host (``dl_device`` must be None or ``(kDLCPU, 0)``,
    else BufferError). ``copy=None`` or ``True``: the logical tensor gathered
    into a fresh buffer, which no shard shares (a copy). ``copy=False``: no
    copy, so only a tensor whose one shard already is the whole tensor can be
    exported (every mesh axis B, a cpu placement, a rank of this process in
    it, not bf16): that shard, read-only, which needs a consumer of DLPack
    1.0 or later (``max_version``); otherwise BufferError."""
    if dl_device is not None and tuple(dl_device) != (_KDLCPU, 0):
        raise BufferError(f"__dlpack__: dl_device={tuple(dl_device)}; a global tensor is exported "
                          f"on the CPU only, (kDLCPU={_KDLCPU}, 0)")
    array = _whole_shard(self) if copy is False else self.numpy()
    kwargs = {}  # numpy before 2.1 takes stream alone
    if max_version is not None:
        kwargs["max_version"] = max_version
    if dl_device is not None:
        kwargs["dl_device"] = dl_device
    return array.__dlpack__(stream=stream, **kwargs)


def _whole_shard(self):
    """The read-only shard that is the whole tensor (no copy), or BufferError."""
    why = None
    if any(v != Replicate() for v in self.sbp):
        why = f"it is laid out {self._nd_sbp}, so the whole tensor exists only once gathered"
    elif not self._placement.startswith("cpu"):
        why = f"its placement {self._placement} is not on the CPU"
    elif self.dtype == "bf16":
        why = "bf16 leaves as a float32 copy (numpy has no bf16)"
    else:
        for rank in current_session().local_ranks:
            shard = self._to_local(rank)
            if shard is not None:
                return shard
        why = f"no rank of this process is in {self._placement}"
    raise BufferError(f"__dlpack__(copy=False): exporting this tensor needs a copy: {why}")


def _dlpack_device(self):
    return (_KDLCPU, 0)


def _item(self):
    a = self.numpy()
    if a.size != 1:
        raise ValueError(f"item(): the tensor has {a.size} elements, not 1")
    return a.reshape(()).item()


def _getstate(self):
    raise TypeError("a global tensor is not picklable; pickle t.numpy() with t.sbp and t.placement")


def _install():
    Tensor.sbp = property(_sbp)
    Tensor.placement = property(_placement_of)
    Tensor.to_local = _to_local
    Tensor.to_global = _to_global
    Tensor.backward = _backward
    Tensor.dim = _ndim
    Tensor.size = _size
    Tensor.numel = _numel
    Tensor.item = _item
    Tensor.__array__ = _array
    Tensor.__dlpack__ = _dlpack
    Tensor.__dlpack_device__ = _dlpack_device
    Tensor.__reduce__ = _getstate


_install()
