"""Names in error messages reach Python escaped and cut (issue 24): a NUL,
an ANSI escape or a 2,000-character name in a file, a checkpoint target or
an einsum equation can neither cut the message nor drive the terminal."""
import struct

import numpy as np
import pytest

import oneflow_sbp as ofs
from oneflow_sbp import Replicate, Shard

HOSTILE = "w\x00\x1b[31mred" + "n" * 2001  # 2,011 characters


def safe(message):
    """The message carries no raw control character and stays short."""
    assert not any(ord(c) < 0x20 or 0x7F <= ord(c) <= 0x9F for c in message), repr(message)
    assert len(message) < 700, len(message)
    return message


def write_header(path, header):
    body = header.encode()
    path.write_bytes(struct.pack("<Q", len(body)) + body + b"\x00" * 8)
    return str(path)


def entry(dtype="F32", offsets=(0, 4)):
    return '{"dtype":"%s","shape":[1],"data_offsets":[%d,%d]}' % (dtype, *offsets)


def test_safetensors_names_are_escaped_and_cut(tmp_path):
    key = "w\\u0000\\u001b[31mred" + "n" * 2001
    path = write_header(tmp_path / "hostile.safetensors",
                        '{"%s":%s,"b":%s}' % (key, entry(), entry("\\u001b[2J", (4, 8))))
    with pytest.raises(ValueError) as e:
        ofs.checkpoint.read_safetensors(path)
    m = safe(str(e.value))
    assert "field 'dtype' is '\\x1b[2J'" in m
    with pytest.raises(ValueError) as e:
        ofs.checkpoint.read_safetensors(
            write_header(tmp_path / "dup.safetensors", '{"%s":%s,"%s":%s}' % (key, entry(), key, entry())))
    m = safe(str(e.value))
    assert "duplicate key 'w\\x00\\x1b[31mrednnn" in m and "(2011 characters)" in m


def test_the_header_is_strict_json(tmp_path):
    for i, header in enumerate(["{'a':%s}" % entry(), '{"a":%s,}' % entry(),
                                '{"a":%s,"a":%s}' % (entry(), entry())]):
        with pytest.raises(ValueError, match="the header is not valid JSON: byte"):
            ofs.checkpoint.read_safetensors(write_header(tmp_path / ("s%d.safetensors" % i), header))


def test_checkpoint_target_names_are_escaped_and_cut(session, mesh22, tmp_path):
    d = str(tmp_path / "ckpt")
    w = ofs.tensor(np.ones((4, 2), np.float32), placement=mesh22, sbp=[Shard(0), Replicate()])
    ofs.checkpoint.save(d, {"w": w})
    with pytest.raises(KeyError) as e:
        ofs.checkpoint.load(d, {HOSTILE: (mesh22, [Shard(0), Replicate()])})
    m = safe(e.value.args[0])
    assert "no tensor 'w\\x00\\x1b[31mrednnn" in m and "(2011 characters) (it has 'w')" in m


def test_einsum_equations_are_escaped_and_cut(session, mesh22):
    a = ofs.tensor(np.ones((4, 2), np.float32), placement=mesh22, sbp=[Replicate(), Replicate()])
    with pytest.raises(ValueError) as e:
        ofs.einsum("mk,kn->\x1b[2J\x9b" + "k" * 2000, a, a)
    m = safe(str(e.value))
    assert "equation 'mk,kn->\\x1b[2J\\u009bkkk" in m
    assert "(2013 characters)" in m  # bytes: U+009B is two in UTF-8
