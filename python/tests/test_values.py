import pickle

import pytest

import oneflow_sbp as ofs
from oneflow_sbp import Partial, Replicate, Shard, sbp


def test_oneflow_and_dtensor_spellings_are_one_value():
    assert sbp.split(1) == Shard(1)
    assert sbp.broadcast == Replicate()
    assert sbp.partial_sum == Partial()
    assert hash(sbp.split(1)) == hash(Shard(1))
    assert {Shard(0), sbp.split(0), Replicate()} == {sbp.split(0), sbp.broadcast}
    assert str(Shard(2)) == "S(2)" and str(Replicate()) == "B" and str(Partial()) == "P"
    assert sbp.split(0) != sbp.split(1) and sbp.split(0) != sbp.broadcast


def test_values_pickle():
    for v in (sbp.split(3), sbp.broadcast, sbp.partial_sum, ofs.placement("cpu:0-3 [2,2]")):
        assert pickle.loads(pickle.dumps(v)) == v


def test_bad_sbp_notation():
    with pytest.raises(ValueError):
        sbp.split(-1)
    with pytest.raises(ValueError):
        sbp.split("0")
    with pytest.raises(ValueError, match="S\\(x"):
        sbp.to_nd_sbp_text("(S(x), B)")
    with pytest.raises(ValueError):
        sbp.to_nd_sbp_text([])
    with pytest.raises(NotImplementedError):
        Partial("avg")


def test_partial_max_and_min():
    assert Partial("max") == sbp.partial_max and str(sbp.partial_max) == "P(max)"
    assert Partial("min") == sbp.partial_min and sbp.partial_min.reduce_op == "min"
    assert sbp.partial_max != sbp.partial_sum and hash(sbp.partial_max) != hash(sbp.partial_min)
    assert sbp.partial_sum.reduce_op == "sum" and sbp.broadcast.reduce_op is None
    assert sbp.parse_nd_sbp("[Partial('max'), Shard(1)]") == (sbp.partial_max, Shard(1))
    assert sbp.parse_nd_sbp("(P(min), B)") == (sbp.partial_min, sbp.broadcast)
    assert sbp.to_nd_sbp_text([sbp.partial_max, sbp.split(0)]) == "(P(max), S(0))"
    assert pickle.loads(pickle.dumps(sbp.partial_min)) == sbp.partial_min
    assert repr(sbp.partial_max) == "oneflow_sbp.sbp.partial_max"


def test_text_spellings_parse_to_values():
    assert sbp.parse_nd_sbp("[Shard(0), Replicate()]") == (sbp.split(0), sbp.broadcast)
    assert sbp.parse_nd_sbp("(S(1), P)") == (Shard(1), Partial())
    assert sbp.to_nd_sbp_text([sbp.split(0), sbp.broadcast]) == "(S(0), B)"


def test_placement_as_oneflow_writes_it():
    p = ofs.placement("cpu", ranks=[[0, 1], [2, 3]])
    assert str(p) == "cpu:0-3 [2,2]"
    assert p == ofs.placement("cpu:0-3 [2,2]")
    assert p.hierarchy == (2, 2) and p.ranks == [[0, 1], [2, 3]] and p.type == "cpu"
    assert hash(p) == hash(ofs.placement("cpu:0-3 [2,2]"))
    flat = ofs.placement("cpu", ranks=[0, 1, 2, 3])
    assert str(flat) == "cpu:0-3" and flat.hierarchy == (4,)
    assert str(ofs.placement("cpu", ranks=[[0, 2], [4, 6]])) == "cpu:0,2,4,6 [2,2]"


def test_bad_placements():
    with pytest.raises(ValueError):
        ofs.placement("cpu:0-3 [3,2]")
    with pytest.raises(ValueError):
        ofs.placement("tpu:0-3")
    with pytest.raises(ValueError, match="ragged"):
        ofs.placement("cpu", ranks=[[0, 1], [2]])
    with pytest.raises(ValueError):
        ofs.placement("cpu", ranks=[[0, 0], [1, 2]])
