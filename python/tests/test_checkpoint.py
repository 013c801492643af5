"""Safetensors and distributed checkpoints from Python."""
import numpy as np
import pytest

import oneflow_sbp as ofs
from oneflow_sbp import Replicate, Shard, sbp


def test_safetensors_round_trip_and_sharded_load(session, mesh22, tmp_path):
    path = str(tmp_path / "w.safetensors")
    w = np.arange(60, dtype=np.float32).reshape(10, 6)
    b = np.arange(6, dtype=np.float32)
    ofs.checkpoint.write_safetensors(path, {"w": w, "b": b, "i": np.arange(4)}, {"format": "pt"})
    arrays, meta = ofs.checkpoint.read_safetensors(path)
    np.testing.assert_array_equal(arrays["w"], w)
    assert arrays["i"].dtype == np.int64 and meta == {"format": "pt"}
    t = ofs.load_safetensors(path, mesh22, [Shard(0), Shard(1)], names=["w", "b"])
    assert t["w"].sbp == (Shard(0), Shard(1))
    assert t["b"].sbp == (Shard(0), Replicate())  # b has no dim 1
    np.testing.assert_array_equal(t["w"].to_local(3), w[5:, 3:])
    np.testing.assert_array_equal(t["b"].numpy(), b)
    with pytest.raises(KeyError):
        ofs.load_safetensors(path, mesh22, [Shard(0), Shard(1)], names=["nope"])
    with pytest.raises(KeyError):
        ofs.checkpoint.read_safetensors(str(tmp_path / "missing.safetensors"))
    bad = tmp_path / "bad.safetensors"
    bad.write_bytes(b"\x05\x00\x00\x00\x00\x00\x00\x00[1,2]")
    with pytest.raises(ValueError, match="not a JSON object"):
        ofs.checkpoint.read_safetensors(str(bad))


def test_checkpoint_save_and_reshard(session, mesh22, tmp_path):
    d = str(tmp_path / "ckpt")
    w0 = np.arange(48, dtype=np.float32).reshape(8, 6)
    w = ofs.tensor(w0, placement=mesh22, sbp=[Shard(0), Replicate()], requires_grad=True)
    loss = ofs.sum(w * w)
    ofs.checkpoint.save(d, {"w": w, "partial": loss}, metadata={"step": 1})
    text = ofs.checkpoint.inspect(d)
    assert "w  f32[8,6]  saved (S(0), B) on cpu:0-3 [2,2]  2 pieces" in text
    out = ofs.checkpoint.load(d, {"w": (ofs.placement("cpu:0-2"), sbp.split(1)),
                                  "partial": (ofs.placement("cpu:0"), sbp.broadcast)})
    assert out["w"].sbp == (Shard(1),)
    np.testing.assert_array_equal(out["w"].numpy(), w0)
    np.testing.assert_allclose(out["partial"].item(), (w0 * w0).sum())
    export = str(tmp_path / "whole.safetensors")
    ofs.checkpoint.export(d, export)
    arrays, meta = ofs.checkpoint.read_safetensors(export)
    np.testing.assert_array_equal(arrays["w"], w0)
    assert meta == {"step": "1"}
    with pytest.raises(KeyError, match="no tensor 'v'"):
        ofs.checkpoint.load(d, {"v": (mesh22, [Shard(0), Replicate()])})
    with pytest.raises(KeyError):
        ofs.checkpoint.load(str(tmp_path / "none"), {"w": (mesh22, [Shard(0), Replicate()])})
    with pytest.raises(TypeError):
        ofs.checkpoint.save(d, {"w": w0})
