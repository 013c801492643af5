import numpy as np
import pytest

import oneflow_sbp as ofs
from oneflow_sbp import sbp


def _same_shape(ctx):
    return [(ctx.input_shape("x"), ctx.input_dtype("x"))]


def _elementwise_rule(ctx):
    for axis in range(len(ctx.input_shape("x"))):
        ctx.builder().split(ctx.inputs(), axis).split(ctx.outputs(), axis).build()
    # A scale is linear: a partial sum in gives a partial sum out.
    ctx.builder().partial_sum(ctx.inputs()).partial_sum(ctx.outputs()).build()


def _register_once(name, **kw):
    try:
        ofs.register_op(name, **kw)
    except ValueError as e:  # a second run of this module in one process
        assert "already" in str(e)


_register_once("py_scale", inputs=["x"], outputs=["y"], infer_shape=_same_shape,
               sbp_rule=_elementwise_rule, kernel=lambda x, factor: x * np.float32(factor),
               attrs={"factor": 2.0})


def test_python_op_runs_like_a_builtin(session, mesh22):
    a = np.arange(48, dtype=np.float32).reshape(8, 6)
    x = ofs.tensor(a, placement=mesh22, sbp=[sbp.split(0), sbp.split(1)])
    y = ofs.apply("py_scale", x, factor=3.0)
    assert y.sbp == (sbp.split(0), sbp.split(1))  # no boxing needed: the rule splits both dims
    np.testing.assert_allclose(y.numpy(), 3 * a)
    r = ofs.infer("py_scale", [((8, 6), "f32", "(S(0), S(1))")], placement=mesh22)
    assert r.signature == "x_0:(S(0),S(1)) -> y_0:(S(0),S(1))"
    assert "py_scale" in {o["name"] for o in ofs.ops()}


def test_verify_checks_the_rule_by_execution(session):
    report = ofs.verify("py_scale")
    assert report["ok"], report["report"]
    assert report["outcome"] == "passed" and report["checked"] > 0


def test_verify_catches_a_wrong_rule(session):
    def wrong_rule(ctx):  # claims a row sum splits along the summed dim
        ctx.builder().split(ctx.inputs(), 1).split(ctx.outputs(), 0).build()
    _register_once("py_bad_rowsum", inputs=["x"], outputs=["y"],
                   infer_shape=lambda ctx: [((ctx.input_shape("x")[0],), ctx.input_dtype("x"))],
                   sbp_rule=wrong_rule, kernel=lambda x: x.sum(axis=1))
    report = ofs.verify("py_bad_rowsum")
    assert not report["ok"] and report["outcome"] == "FAILED"
    assert "py_bad_rowsum" in report["report"]


def test_name_taken():
    with pytest.raises(ValueError, match="already"):
        ofs.register_op("relu", inputs=["x"], outputs=["y"], infer_shape=_same_shape,
                        sbp_rule=_elementwise_rule, kernel=lambda x: x)


def test_raising_rule_and_shape_function_reach_the_caller(session):
    def bad_rule(ctx):
        raise ArithmeticError("rule exploded")
    _register_once("py_bad_rule", inputs=["x"], outputs=["y"], infer_shape=_same_shape,
                   sbp_rule=bad_rule, kernel=lambda x: x)
    with pytest.raises(RuntimeError, match="py_bad_rule.*sbp rule raised ArithmeticError: rule exploded"):
        ofs.infer("py_bad_rule", [((4, 4), "f32", "S(0)")], placement="cpu:0-1")

    def bad_shape(ctx):
        raise LookupError("no shape")
    _register_once("py_bad_shape", inputs=["x"], outputs=["y"], infer_shape=bad_shape,
                   sbp_rule=_elementwise_rule, kernel=lambda x: x)
    x = ofs.tensor(np.ones((4, 4), np.float32), placement=ofs.placement("cpu:0-1"), sbp=sbp.split(0))
    with pytest.raises(RuntimeError, match="py_bad_shape.*infer_shape raised LookupError"):
        ofs.apply("py_bad_shape", x)
    # The engine is intact: the same tensor goes on through built-ins and good Python ops.
    np.testing.assert_allclose(ofs.apply("py_scale", x, factor=2.0).numpy(), 2 * np.ones((4, 4)))


def test_raising_kernel_on_one_rank_fails_the_call_not_the_session(session):
    calls = []

    def kernel(x):
        calls.append(1)
        if x.shape[0] == 3:  # only the rank holding the short tail (uneven split of 7 rows)
            raise FloatingPointError("rank kernel failed")
        return x + 1

    _register_once("py_flaky", inputs=["x"], outputs=["y"], infer_shape=_same_shape,
                   sbp_rule=_elementwise_rule, kernel=kernel)
    p = ofs.placement("cpu:0-1")
    x = ofs.tensor(np.zeros((7, 2), np.float32), placement=p, sbp=sbp.split(0))
    s = ofs.session.current_session()
    before = s.rebuilds
    with pytest.raises(RuntimeError, match=r"py_flaky.*kernel raised FloatingPointError.*\[rank 1\]"):
        ofs.apply("py_flaky", x)
    assert s.rebuilds == before + 1  # the aborted world was replaced
    np.testing.assert_allclose(ofs.relu(x).numpy(), np.zeros((7, 2)))


def test_kernel_returning_the_wrong_shape(session):
    _register_once("py_wrong_shape", inputs=["x"], outputs=["y"], infer_shape=_same_shape,
                   sbp_rule=_elementwise_rule, kernel=lambda x: np.zeros((1,), np.float32))
    x = ofs.tensor(np.zeros((4, 2), np.float32), placement=ofs.placement("cpu:0-1"), sbp=sbp.split(0))
    with pytest.raises(ValueError, match="dims"):
        ofs.apply("py_wrong_shape", x)


def test_a_kernel_calling_ops_is_refused_not_a_deadlock(session):
    def kernel(x):
        return ofs.relu(ofs.tensor(x, placement=ofs.placement("cpu:0"), sbp=sbp.broadcast)).numpy()
    _register_once("py_reentrant", inputs=["x"], outputs=["y"], infer_shape=_same_shape,
                   sbp_rule=_elementwise_rule, kernel=kernel)
    x = ofs.tensor(np.zeros((4, 2), np.float32), placement=ofs.placement("cpu:0-1"), sbp=sbp.split(0))
    with pytest.raises(RuntimeError, match="inside a rank's step"):
        ofs.apply("py_reentrant", x)
    np.testing.assert_allclose(ofs.relu(x).numpy(), np.zeros((4, 2)))


def _scale_by_total(name, kernel):
    """y = kernel(x, b.sum()): every rank needs all of b, so the rule's second
    input is B (the builder's .broadcast) while x may be split."""
    def rule(ctx):
        x, b = ctx.input("x"), ctx.input("b")
        for axis in range(len(ctx.input_shape("x"))):
            ctx.builder().split(x, axis).broadcast(b).split(ctx.outputs(), axis).build()
        # Claimed for both ops, true only where the kernel is linear in x.
        ctx.builder().partial_sum(x).broadcast(b).partial_sum(ctx.outputs()).build()
    _register_once(name, inputs=["x", "b"], outputs=["y"], infer_shape=_same_shape, sbp_rule=rule,
                   kernel=lambda x, b: kernel(x, b.sum(dtype=np.float32)))


def test_a_rule_with_a_broadcast_input(session):
    _scale_by_total("py_mul_total", lambda x, total: x * total)
    p = ofs.placement("cpu:0-1")
    a = np.arange(24, dtype=np.float32).reshape(4, 6)
    w = np.arange(5, dtype=np.float32) - 1
    x = ofs.tensor(a, placement=p, sbp=sbp.split(0))
    b = ofs.tensor(w, placement=p, sbp=sbp.split(0))  # not B: the engine boxes it
    r = ofs.infer("py_mul_total", [x, b], placement=p)
    assert r.signature == "x_0:S(0) b_0:B -> y_0:S(0)"
    assert not r.inputs[0].needs_boxing and r.inputs[1].needs_boxing
    y = ofs.apply("py_mul_total", x, b)
    assert y.sbp == (sbp.split(0),)
    np.testing.assert_array_equal(y.numpy(), a * w.sum())
    # x * total is linear in x: a partial sum times the whole b is a partial sum.
    report = ofs.verify("py_mul_total")
    assert report["ok"], report["report"]
    assert report["outcome"] == "passed" and report["checked"] > 0


def test_verify_catches_a_wrong_broadcast_rule(session):
    # x + total is not linear in x: with x a partial sum, every rank adds the
    # total, so the sum over ranks holds it once per rank. The rule claims
    # P(x), B(b) -> P(y) anyway.
    _scale_by_total("py_add_total", lambda x, total: x + total)
    report = ofs.verify("py_add_total")
    assert not report["ok"] and report["outcome"] == "FAILED"
    assert "x_0:P b_0:B -> y_0:P" in report["report"], report["report"]
