import pytest

import oneflow_sbp as ofs
from oneflow_sbp import DistTensorSpec, Replicate, Shard, sbp

MESH = "cpu:0-3 [2,2]"


def test_infer_matmul_row_times_column():
    r = ofs.infer("matmul", [((64, 32), "f32", [Shard(0), Replicate()]),
                             ((32, 48), "f32", "(B, S(1))")], placement=MESH)
    assert r.signature == "a_0:(S(0),B) b_0:(B,S(1)) -> out_0:(S(0),S(1))"
    out = r.outputs[0]
    assert out.shape == (64, 48) and out.dtype == "f32" and out.sbp == (sbp.split(0), sbp.split(1))
    assert r.boxing_bytes == 0 and not any(b.needs_boxing for b in r.inputs)


def test_infer_reports_boxing_bytes_and_steps():
    # 1-D: a split contraction dim against a broadcast weight: OneFlow boxes.
    r = ofs.infer("matmul", [((64, 32), "f32", "S(1)"), ((32, 48), "f32", "S(1)")],
                  placement="cpu:0-1")
    boxed = [b for b in r.inputs if b.needs_boxing]
    assert boxed, r.signature
    assert all(b.boxing_bytes > 0 and b.boxing for b in boxed)
    assert r.boxing_bytes == sum(b.boxing_bytes for b in boxed)


def test_infer_attrs_constraints_and_cost_policy():
    r = ofs.infer("matmul", [((32, 64), "f32", "B"), ((48, 64), "f32", "B")],
                  attrs={"transpose_b": True}, placement="cpu:0-1")
    assert r.outputs[0].shape == (32, 48)
    c = ofs.infer("relu", [((8, 6), "f32", "S(0)")], placement="cpu:0-1",
                  constraints={"y_0": "S(1)"})
    assert c.outputs[0].sbp == (sbp.split(1),)
    planned = ofs.infer("relu", [((8, 6), "f32", "S(0)")], placement="cpu:0-1", cost="planned")
    assert planned.cost == "planned"
    with pytest.raises(ValueError, match="cost policy"):
        ofs.infer("relu", [((8, 6), "f32", "S(0)")], placement="cpu:0-1", cost="cheapest")


def test_explain_rows():
    r = ofs.infer("matmul", [((64, 32), "f32", "S(0)"), ((32, 48), "f32", "B")],
                  placement="cpu:0-1", explain=True)
    rows = r.explain()
    chosen = [row for row in rows if row["status"] == "chosen"]
    assert len(chosen) == 1 and chosen[0]["rank"] == 1
    assert chosen[0]["signature"] == r.signature
    assert len(rows) == r.num_candidates
    # Without explain=True the rows are computed on demand.
    again = ofs.infer("matmul", [((64, 32), "f32", "S(0)"), ((32, 48), "f32", "B")],
                      placement="cpu:0-1")
    assert [x["signature"] for x in again.explain()] == [x["signature"] for x in rows]


def test_infer_errors():
    with pytest.raises(KeyError, match="matmull"):
        ofs.infer("matmull", [((4, 4), "f32", "B"), ((4, 4), "f32", "B")], placement="cpu:0-1")
    with pytest.raises(ValueError, match="matmul"):
        ofs.infer("matmul", [((4, 5), "f32", "B"), ((4, 4), "f32", "B")], placement="cpu:0-1")
    with pytest.raises(ValueError):
        ofs.infer("relu", [((4, 4), "f32", "S(0)")], placement="cpu:0-3 [2,2]")  # 1 entry on 2 axes
    with pytest.raises(ValueError, match="attribute"):
        ofs.infer("relu", [((4, 4), "f32", "B")], attrs={"alpha": object()}, placement="cpu:0")
    with pytest.raises(ValueError, match="unknown blob"):
        ofs.infer("relu", [((4, 4), "f32", "B")], placement="cpu:0-1", constraints={"z_0": "B"})
    with pytest.raises(ValueError, match="dtype"):
        ofs.infer("relu", [((4, 4), "complex64", "B")], placement="cpu:0-1")


def test_ops_lists_the_catalog():
    ops = {o["name"]: o for o in ofs.ops()}
    assert len(ops) >= 109
    mm = ops["matmul"]
    assert [a["name"] for a in mm["inputs"]][:2] == ["a", "b"]
    assert mm["inputs"][2]["optional"]  # _add_to_output
    assert {a["name"] for a in mm["attrs"]} >= {"transpose_a", "transpose_b"}
    assert mm["has_sbp_rule"]
    assert ops["cat"]["aliases"] == ["concat"] and mm["aliases"] == []
    assert ops["reduce_max"]["extended_partials"] and not ops["square"]["extended_partials"]


def test_each_catalog_op_carries_its_record():
    # ops/records/*.toml: one record per built-in op; ops registered from
    # Python have none.
    ops = {o["name"]: o for o in ofs.ops()}
    assert sum(o["record"] is not None for o in ops.values()) == 114
    r = ops["rms_norm"]["record"]
    assert (r["family"], r["record_file"], r["rules_file"]) == (
        "norms", "ops/records/norms.toml", "ops/norm_ops.cc")
    assert (r["origin"], r["kernels"], r["backward"]) == ("oneflow", ["cpu", "cuda"], "rule")
    assert {"name": "fused_rms_norm", "in": ["paddle"], "attrs": {}} in r["names"]
    assert ops["reduce_mean"]["record"]["names"][0] == {
        "name": "mean", "in": ["oneflow", "torch"], "attrs": {"dim": "axis", "keepdim": "keepdims"}}
    assert ops["gather"]["record"]["backward"] == "not written yet"
    assert ops["einsum"]["record"]["kernels"] == ["cpu"] and ops["einsum"]["record"]["origin"] == "ours"
    # What a rule appends after OneFlow's own list, as the record says.
    assert ops["gather"]["record"]["ours"].startswith("`in:P indices:B -> out:P`")
    assert r["ours"] is None
    # Paddle's names come from the records (a Paddle-only name resolves there).
    assert ofs.get_spmd_rule("fused_rms_norm").op == "rms_norm"
    assert ofs.get_spmd_rule("reduction").op == "reduce_sum"


def test_planned_policy_offers_partial_max():
    r = ofs.infer("reduce_max", [((8, 16), "f32", "S(1)")], attrs={"axis": [1]},
                  placement="cpu:0-3", cost="planned")
    assert r.outputs[0].sbp == (ofs.sbp.partial_max,) and r.boxing_bytes == 0
    r = ofs.infer("reduce_max", [((8, 16), "f32", "S(1)")], attrs={"axis": [1]},
                  placement="cpu:0-3")
    assert ofs.sbp.partial_max not in r.outputs[0].sbp


def test_paddle_style_rule_matmul():
    rule = ofs.get_spmd_rule("matmul")
    x = DistTensorSpec([64, 32], [0, -1], [2, 2])
    w = DistTensorSpec([32, 48], [-1, 1], [2, 2])
    ins, outs = rule.infer_forward(x, w, trans_x=False, trans_y=False)
    assert [s.dims_mapping for s in ins] == [[0, -1], [-1, 1]]
    assert outs[0].dims_mapping == [0, 1] and outs[0].partial_dims == ()
    # Row parallel: the contraction dim split gives a partial sum on that axis.
    ins, outs = rule.infer_forward(DistTensorSpec([64, 32], [-1, 1], [2, 2]),
                                   DistTensorSpec([32, 48], [1, -1], [2, 2]))
    assert outs[0].dims_mapping == [-1, -1] and outs[0].partial_dims == (1,)


def test_paddle_aliases_and_unknown_names():
    ins, outs = ofs.get_spmd_rule("elementwise_add").infer_forward(
        DistTensorSpec([8, 6], [0, -1], [2]), DistTensorSpec([8, 6], [0, -1], [2]))
    assert outs[0].dims_mapping == [0, -1]
    ins, outs = ofs.get_spmd_rule("sum").infer_forward(DistTensorSpec([8, 6], [0, -1], [2]),
                                                       axis=[0], keepdim=False)
    assert outs[0].shape == (6,) and outs[0].partial_dims == (0,)
    with pytest.raises(KeyError):
        ofs.get_spmd_rule("no_such_rule")
    with pytest.raises(ValueError):
        DistTensorSpec([8, 6], [0], [2])
    with pytest.raises(ValueError):
        DistTensorSpec([8, 6], [0, 0], [2, 2])
    with pytest.raises(ValueError, match="different meshes"):
        ofs.get_spmd_rule("matmul").infer_forward(DistTensorSpec([4, 4], [-1, -1], [2]),
                                                  DistTensorSpec([4, 4], [-1, -1], [2, 2]))


def test_plan_boxing_steps_and_dot():
    p = ofs.plan_boxing((8, 6), "f32", MESH, [Shard(0), Replicate()], [Replicate(), Replicate()])
    assert len(p) >= 1 and p.total_bytes > 0
    step = p.steps[0]
    assert step["collective"] == "all_gather" and step["mesh_axes"] == [0]
    assert step["bytes_per_rank"] == 96  # the other half of f32[8,6]: 24 floats
    dot = p.to_dot()
    assert dot.startswith("digraph boxing") and "all_gather" in dot
    assert ofs.plan_boxing((8, 6), "f32", MESH, "(S(0), B)", "(S(0), B)").total_bytes == 0
    moved = ofs.plan_boxing((8, 6), "f32", "cpu:0-1", "S(0)", "B", dst_placement="cpu:2-3")
    assert moved.total_bytes > 0


def test_plan_boxing_errors():
    with pytest.raises(ValueError):
        ofs.plan_boxing((8, 6), "f32", MESH, "(S(5), B)", "(B, B)")
    with pytest.raises(ValueError):
        ofs.plan_boxing((8, 6), "f32", MESH, "(S(0), B)", "(B)")
