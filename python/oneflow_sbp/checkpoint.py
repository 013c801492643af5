"""Distributed checkpoints and safetensors files (docs/CHECKPOINTS.md).

    ofs.checkpoint.save("/ckpt/run1", {"w": w, "b": b}, metadata={"step": "3"})
    t = ofs.checkpoint.load("/ckpt/run1", {"w": (placement, [sbp.split(1)])})
    print(ofs.checkpoint.inspect("/ckpt/run1"))
    ofs.checkpoint.export("/ckpt/run1", "/tmp/whole.safetensors")

A checkpoint is a directory of safetensors shard files and an index;
`save` writes each region once and commits atomically, `load` reshards into
any placement and layout (each rank reads only the pieces it needs). A
plain .safetensors file is a source for `load` too."""

from . import _C
from .placement import placement as _placement
from .sbp import to_nd_sbp_text
from .session import current_session

__all__ = ["save", "load", "inspect", "export", "load_safetensors", "read_safetensors",
           "write_safetensors"]


def save(directory, tensors, metadata=None):
    """Saves {name: global tensor} with string metadata; collective over the session's ranks."""
    current_session().checkpoint_save(str(directory), dict(tensors),
                                      {str(k): str(v) for k, v in (metadata or {}).items()})


def load(source, targets):
    """{name: global tensor} from a checkpoint directory or a .safetensors file.
    ``targets``: {name: (placement, sbp)} — any placement and layout."""
    t = {str(k): (str(_placement.of(p)), to_nd_sbp_text(s)) for k, (p, s) in targets.items()}
    return current_session().checkpoint_load(str(source), t)


def inspect(source):
    """Tensors, saved layouts, pieces and sizes as text (``sbp ckpt inspect``)."""
    return _C.checkpoint_inspect(str(source))


def export(source, out_file):
    """One consolidated .safetensors file any reader loads (``sbp ckpt export``)."""
    _C.checkpoint_export(str(source), str(out_file))


def load_safetensors(path, placement, sbp, names=None):
    """{name: global tensor} from a .safetensors file, each rank reading only
    its slice. ``sbp`` applies to every tensor; a split of a dim a tensor
    lacks (a bias under S(1)) becomes broadcast for that tensor."""
    return current_session().load_safetensors(str(path), str(_placement.of(placement)),
                                              to_nd_sbp_text(sbp),
                                              None if names is None else list(names))


def read_safetensors(path):
    """({name: numpy array}, metadata) of a whole file, in one process."""
    return _C.read_safetensors(str(path))


def write_safetensors(path, arrays, metadata=None):
    """Writes {name: numpy array} atomically (temporary file, fsync, rename)."""
    _C.write_safetensors(str(path), dict(arrays), {str(k): str(v) for k, v in (metadata or {}).items()})
