import numpy as np
import pytest

import oneflow_sbp as ofs
from oneflow_sbp import Replicate, Shard, sbp


def arange(*shape, dtype=np.float32):
    n = int(np.prod(shape))
    return (np.arange(n, dtype=np.float64) * 0.37 - n / 7).astype(dtype).reshape(shape)


def test_scatter_gather_and_metadata(session, mesh22):
    a = arange(8, 6)
    x = ofs.tensor(a, placement=mesh22, sbp=[sbp.split(0), sbp.broadcast])
    assert x.shape == (8, 6) and x.dtype == "f32" and x.ndim == 2
    assert x.sbp == (Shard(0), Replicate()) and x.placement == mesh22
    np.testing.assert_array_equal(x.numpy(), a)
    # Rank 2 is mesh coordinate (1, 0): the second half of the rows.
    np.testing.assert_array_equal(x.to_local(2), a[4:])
    assert not x.to_local(2).flags.writeable


_SCATTER_PEAK = r'''
import resource
import numpy as np
import oneflow_sbp as ofs
from oneflow_sbp import sbp

p = ofs.placement("cpu:0-3")
ofs.tensor(np.ones((4, 4), np.float32), placement=p, sbp=sbp.split(0))  # ranks started
a = np.full((1024, 32768), 1.5, np.float32)  # 128 MiB, resident
a.flags.writeable = False
before = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
x = ofs.tensor(a, placement=p, sbp=sbp.split(0))
after = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
assert np.array_equal(x.to_local(3), a[768:])
print((after - before) * 1024 / a.nbytes)
'''


def test_tensor_copies_each_shard_from_the_array_not_the_whole_array():
    # The peak memory of scattering a 128 MiB read-only array into 4 shards
    # grows by the shards (1x the array); a copy of the whole array first
    # (the engine's FromFull) would make it 2x. A fresh process, so the
    # peak is this call's.
    import subprocess
    import sys
    from build_paths import child_env
    out = subprocess.run([sys.executable, "-c", _SCATTER_PEAK], capture_output=True, text=True,
                         env=child_env(), timeout=120)
    assert out.returncode == 0, out.stderr
    assert float(out.stdout) < 1.5, f"peak grew by {float(out.stdout):.2f}x the array"


def test_tensor_reads_any_array(session, mesh22):
    # Straight from the buffer, or through one numpy copy when it must.
    a = arange(6, 8)
    cases = [a, a[::2, 1::3], np.asfortranarray(a), a.astype(">f4"), a.astype(np.float64)]
    for arr in cases:
        x = ofs.tensor(arr, placement=mesh22, sbp="(S(1), S(0))")
        assert x.dtype == ("f64" if arr.dtype == np.float64 else "f32")
        np.testing.assert_array_equal(x.numpy(), arr)
        np.testing.assert_array_equal(x.to_local(2), arr[:(arr.shape[0] + 1) // 2, (arr.shape[1] + 1) // 2:])
    x = ofs.tensor(a, placement=mesh22, sbp="(P, S(1))", dtype="f64")  # converted, then sliced
    np.testing.assert_array_equal(x.to_local(1), a[:, 4:])
    np.testing.assert_array_equal(x.to_local(3), np.zeros((6, 4)))  # P keeps the value at coordinate 0
    np.testing.assert_array_equal(x.numpy(), a)
    s = ofs.tensor(np.float32(2.5), placement=mesh22, sbp="(B, B)")
    assert s.shape == () and s.item() == 2.5


def test_numpy_is_never_an_alias_of_a_shard(session, mesh22):
    x = ofs.tensor(arange(4, 4), placement=mesh22, sbp="(B, B)")
    out = x.numpy()
    out[0, 0] = 1e6
    assert x.numpy()[0, 0] != 1e6


def test_dtypes_round_trip(session):
    p = ofs.placement("cpu", ranks=[0, 1])
    for dt in (np.float64, np.float16, np.int64, np.int32, np.int8, np.uint8, np.bool_):
        a = (arange(4, 3) > 0) if dt is np.bool_ else arange(4, 3).astype(dt)
        x = ofs.tensor(a, placement=p, sbp=sbp.split(0))
        assert x.numpy().dtype == a.dtype
        np.testing.assert_array_equal(x.numpy(), a)
    b = ofs.tensor(arange(4, 3), placement=p, sbp=sbp.broadcast, dtype="bf16")
    assert b.dtype == "bf16"
    np.testing.assert_allclose(b.numpy(), arange(4, 3), rtol=1e-2, atol=1e-2)


def test_to_global_boxes_with_the_planner(session, mesh22):
    a = arange(8, 6)
    x = ofs.tensor(a, placement=mesh22, sbp=[Shard(0), Replicate()])
    y = x.to_global(sbp=[Replicate(), Shard(1)])
    assert y.sbp == (Replicate(), Shard(1))
    np.testing.assert_array_equal(y.to_local(1), a[:, 3:])
    z = x.to_global(placement=ofs.placement("cpu:4-5"), sbp=sbp.split(1))  # grows the world
    assert ofs.world_size() == 6
    np.testing.assert_array_equal(z.numpy(), a)


def test_from_local_shards(session):
    p = ofs.placement("cpu", ranks=[0, 1, 2, 3])
    shards = [arange(2, 3) + i for i in range(4)]
    x = ofs.from_local(shards, placement=p, sbp=sbp.split(0))
    assert x.shape == (8, 3)
    np.testing.assert_array_equal(x.numpy(), np.concatenate(shards))
    with pytest.raises(ValueError, match="one per rank"):
        ofs.from_local(shards[:3], placement=p, sbp=sbp.split(0))
    with pytest.raises(ValueError, match="dims"):
        ofs.from_local([arange(2, 3)] * 3 + [arange(3, 3)], placement=p, sbp=sbp.split(0),
                       shape=(8, 3))


def test_ops_match_numpy_and_layouts_are_the_engines(session, mesh22):
    a, w = arange(8, 6), arange(6, 4)
    x = ofs.tensor(a, placement=mesh22, sbp=[Shard(0), Replicate()])
    m = ofs.tensor(w, placement=mesh22, sbp=[Replicate(), Shard(1)])
    y = ofs.matmul(x, m)
    np.testing.assert_allclose(y.numpy(), a @ w, rtol=1e-5, atol=1e-5)
    assert y.sbp == (Shard(0), Shard(1))
    np.testing.assert_allclose(ofs.relu(x).numpy(), np.maximum(a, 0))
    np.testing.assert_allclose(ofs.softmax(x).numpy(),
                               np.exp(a) / np.exp(a).sum(-1, keepdims=True), rtol=1e-5)
    np.testing.assert_allclose(ofs.sum(x, dim=1).numpy(), a.sum(1), rtol=1e-5)
    np.testing.assert_allclose(ofs.mean(x).numpy(), a.mean(), rtol=1e-5)
    np.testing.assert_array_equal(ofs.reshape(x, (4, 12)).numpy(), a.reshape(4, 12))
    np.testing.assert_array_equal(ofs.transpose(x, 0, 1).numpy(), a.T)
    np.testing.assert_allclose(((x + 1.5) * x - x / 2.0).numpy(), (a + 1.5) * a - a / 2.0,
                               rtol=1e-5)
    np.testing.assert_allclose((x @ m).numpy(), a @ w, rtol=1e-5, atol=1e-5)
    np.testing.assert_allclose(ofs.nn.functional.gelu(x).numpy().shape, (8, 6))
    s = ofs.apply("scalar_mul", x, has_float_operand=True, float_operand=2.0)
    np.testing.assert_allclose(s.numpy(), 2 * a)


def test_op_errors(session, mesh22):
    x = ofs.tensor(arange(8, 6), placement=mesh22, sbp=[Shard(0), Replicate()])
    y = ofs.tensor(arange(5, 4), placement=mesh22, sbp=[Replicate(), Replicate()])
    with pytest.raises(ValueError, match="matmul"):
        ofs.matmul(x, y)  # 6 != 5
    with pytest.raises(KeyError, match="relux"):
        ofs.apply("relux", x)
    with pytest.raises(ValueError, match="reshape"):
        ofs.reshape(x, (5, 5))
    z = ofs.tensor(arange(8, 6), placement=ofs.placement("cpu:0-1"), sbp=sbp.split(0))
    with pytest.raises(ValueError, match="placement"):
        ofs.add(x, z)
    with pytest.raises(ValueError):
        ofs.tensor(arange(8, 6), placement=mesh22, sbp=[Shard(7), Replicate()])
    with pytest.raises(ValueError):
        ofs.tensor(arange(8, 6), placement=mesh22, sbp="(S(0))")
    with pytest.raises(ValueError, match="placement="):
        ofs.tensor(arange(2))
    # The session still works after every error.
    np.testing.assert_array_equal(ofs.relu(x).numpy(), np.maximum(arange(8, 6), 0))


def test_attributes_of_every_python_and_numpy_type(session, mesh22):
    # Built-in bool, int, float and str take the converter's fast path;
    # numpy scalars and sequences the general one; both give one value.
    x = ofs.tensor(arange(8, 6), placement=mesh22, sbp=[Shard(0), Replicate()])
    w = ofs.tensor(arange(5, 6), placement=mesh22, sbp=[Replicate(), Replicate()])
    want = 0.5 * arange(8, 6) @ arange(5, 6).T
    for t, a in [(True, 0.5), (np.bool_(True), np.float32(0.5)), (True, np.float64(0.5))]:
        y = ofs.apply("matmul", x, w, transpose_b=t, alpha=a)
        np.testing.assert_allclose(y.numpy(), want, rtol=1e-6)
    for axis in ([1], (1,), [np.int64(1)], np.array([1])):
        np.testing.assert_allclose(ofs.apply("reduce_sum", x, axis=axis).numpy(),
                                   arange(8, 6).sum(axis=1), rtol=1e-6)
    # An int where a float is declared, and a float where an int is, are
    # errors naming the attribute; so is an int past int64.
    with pytest.raises(ValueError, match="alpha"):
        ofs.apply("matmul", x, w, transpose_b=True, alpha="0.5")
    with pytest.raises((ValueError, OverflowError, RuntimeError)):
        ofs.apply("reduce_sum", x, axis=[1 << 70])
    with pytest.raises(ValueError, match="axis"):
        ofs.apply("reduce_sum", x, axis=[1.5])
    np.testing.assert_array_equal(ofs.relu(x).numpy(), np.maximum(arange(8, 6), 0))


def test_a_dtype_without_a_kernel_is_not_implemented(session):
    x = ofs.tensor(np.ones((4, 4), bool), placement=ofs.placement("cpu:0-1"), sbp=sbp.split(0))
    with pytest.raises(NotImplementedError, match="relu.*bool"):
        ofs.relu(x)


def test_inputs_must_be_global_tensors(session):
    with pytest.raises(TypeError, match="not a global tensor"):
        ofs.apply("relu", np.ones((2, 2), np.float32))


def test_autograd_and_no_grad(session, mesh22):
    a, w = arange(8, 6), arange(6, 4)
    x = ofs.tensor(a, placement=mesh22, sbp=[Shard(0), Replicate()])
    m = ofs.tensor(w, placement=mesh22, sbp=[Replicate(), Shard(1)], requires_grad=True)
    assert m.requires_grad and m.is_leaf and m.grad is None
    loss = ofs.sum(ofs.relu(ofs.matmul(x, m)))
    assert not loss.is_leaf
    loss.backward()
    g = m.grad
    assert g.sbp == m.sbp and g.shape == m.shape
    mask = (a @ w > 0).astype(np.float32)
    np.testing.assert_allclose(g.numpy(), a.T @ mask, rtol=1e-4, atol=1e-4)
    m.grad = None
    assert m.grad is None
    with ofs.no_grad():
        assert not ofs.is_grad_enabled()
        out = ofs.sum(ofs.matmul(x, m))
    assert ofs.is_grad_enabled()
    with pytest.raises(ValueError):
        out.backward()  # nothing recorded: no leaf requires grad
    assert m.grad is None
    assert not m.detach().requires_grad


def test_optimizers_update_in_place(session, mesh22):
    w0 = arange(6, 4)
    for opt_cls, kwargs in ((ofs.optim.SGD, dict(lr=0.1)), (ofs.optim.Adam, dict(lr=0.01))):
        w = ofs.tensor(w0, placement=mesh22, sbp=[Replicate(), Shard(1)], requires_grad=True)
        opt = opt_cls([w], **kwargs)
        ofs.sum(w * w).backward()
        opt.step()
        opt.zero_grad()
        assert w.grad is None
        if opt_cls is ofs.optim.SGD:
            np.testing.assert_allclose(w.numpy(), w0 - 0.1 * 2 * w0, rtol=1e-5)
        else:  # Adam's first step moves each weight by lr against its gradient's sign
            np.testing.assert_allclose(w.numpy(), w0 - 0.01 * np.sign(w0), rtol=1e-4, atol=1e-6)
    with pytest.raises(ValueError):
        ofs.optim.SGD([])


def test_the_cost_policy_chooses_the_output_layout(session):
    # reduce_max over the split dim: OneFlow's policy splits the kept dim
    # (boxing the input), the planned policy keeps the input and leaves a
    # partial max (sbp infer --cost=planned shows the same).
    a = arange(8, 6)
    x = ofs.tensor(a, placement=ofs.placement("cpu:0-1"), sbp=sbp.split(1))
    assert ofs.get_cost_policy() == "oneflow"
    y = ofs.max(x, dim=1)
    assert y.sbp == (Shard(0),)
    ofs.set_cost_policy("planned")
    z = ofs.max(x, dim=1)
    assert z.sbp == (ofs.Partial("max"),)
    assert ofs.apply("reduce_max", x, axis=[1]).sbp == (ofs.Partial("max"),)
    ofs.set_cost_policy("oneflow")
    assert ofs.max(x, dim=1).sbp == (Shard(0),)
    for out in (y, z):
        np.testing.assert_array_equal(out.numpy(), a.max(1))


def test_cost_policy_switch(session):
    ofs.set_cost_policy("planned")
    assert ofs.get_cost_policy() == "planned"
    x = ofs.tensor(arange(8, 6), placement=ofs.placement("cpu:0-1"), sbp=sbp.split(0))
    np.testing.assert_allclose(ofs.relu(x).numpy(), np.maximum(arange(8, 6), 0))
    ofs.set_cost_policy("oneflow")
    with pytest.raises(ValueError, match="unknown cost policy"):
        ofs.set_cost_policy("fastest")


def test_dlpack_in_and_out(session):
    p = ofs.placement("cpu:0-1")
    a = arange(4, 6)
    x = ofs.from_dlpack(a, placement=p, sbp=sbp.split(1))
    np.testing.assert_array_equal(x.numpy(), a)
    back = np.from_dlpack(x)
    np.testing.assert_array_equal(back, a)
    np.testing.assert_array_equal(np.asarray(x), a)


@pytest.mark.skipif(np.lib.NumpyVersion(np.__version__) < "2.1.0",
                    reason="np.from_dlpack takes copy= from numpy 2.1 (Debian 12's is 1.24)")
def test_dlpack_copy_keywords(session):
    # numpy >= 2.1 passes max_version, dl_device and copy to __dlpack__.
    p = ofs.placement("cpu:0-1")
    a = arange(4, 6)
    split = ofs.tensor(a, placement=p, sbp=sbp.split(1))
    whole = ofs.tensor(a, placement=p, sbp=sbp.broadcast)
    for x in (split, whole):
        c = np.from_dlpack(x, copy=True)
        np.testing.assert_array_equal(c, a)
        assert not any(np.shares_memory(c, x.to_local(r)) for r in (0, 1))
        np.testing.assert_array_equal(np.from_dlpack(x, copy=None), a)
    # copy=False: the one shard that is the whole tensor, read-only, no copy.
    v = np.from_dlpack(whole, copy=False)
    np.testing.assert_array_equal(v, a)
    assert np.shares_memory(v, whole.to_local(0)) and not v.flags.writeable
    # ...and where a copy is needed, BufferError rather than a silent copy.
    with pytest.raises(BufferError, match=r"needs a copy.*\(S\(1\)\)"):
        np.from_dlpack(split, copy=False)
    bf = ofs.tensor(a, placement=p, sbp=sbp.broadcast, dtype="bf16")
    with pytest.raises(BufferError, match="bf16"):
        bf.__dlpack__(copy=False, max_version=(1, 0))
    # Only the CPU: another dl_device is a BufferError; the CPU's is fine.
    with pytest.raises(BufferError, match="CPU"):
        whole.__dlpack__(dl_device=(2, 0))
    np.testing.assert_array_equal(np.from_dlpack(whole, device="cpu"), a)
    assert whole.__dlpack_device__() == (1, 0)


def test_tensor_is_not_picklable(session):
    import pickle
    x = ofs.tensor(arange(2, 2), placement=ofs.placement("cpu:0"), sbp=sbp.broadcast)
    with pytest.raises(TypeError):
        pickle.dumps(x)


def test_tensors_of_another_session_are_refused(mesh22):
    ofs.init(world_size=4)
    x = ofs.tensor(arange(8, 6), placement=mesh22, sbp="(S(0), B)")
    ofs.init(world_size=4)
    with pytest.raises(ValueError, match="another session"):
        ofs.relu(x)
    ofs.shutdown()


def test_to_local_is_a_view_of_the_shard(session, mesh22):
    w = ofs.tensor(arange(6, 4), placement=mesh22, sbp=[Replicate(), Shard(1)], requires_grad=True)
    view = w.to_local(1)
    assert np.shares_memory(view, w.to_local(1))  # no copy either time
    before = view.copy()
    ofs.sum(w * w).backward()
    ofs.optim.SGD([w], lr=0.5).step()  # updates the shard in place
    np.testing.assert_allclose(view, before - 0.5 * 2 * before, rtol=1e-6)


def _assert_python_runs_inside(call, work=20_000, timeout_s=60.0):
    """Proves that ``call()`` runs its engine work with the GIL released, by
    order of events rather than by timing (python/native/gil_release.h).

    The probe makes the call's first GIL release wait in native code until
    another thread lets it go. That thread first sees the call waiting, then
    does ``work`` steps of Python, then lets it go: each of those needs the
    GIL, so the call can only return with the probe "released" and the work
    done if the GIL was free while the call was inside the engine. A binding
    that kept the GIL would leave the probe "armed" or "timed out", and the
    test fails after at most ``timeout_s``; how busy the machine is changes
    only how long it takes."""
    import threading
    import time
    from oneflow_sbp import _C
    finished = threading.Event()
    seen = []

    def other():
        deadline = time.monotonic() + timeout_s
        while _C._gil_probe_result() != "waiting":
            if finished.is_set() or time.monotonic() > deadline:
                return
            time.sleep(0.001)
        total = 0
        for i in range(work):
            total += i
        seen.append((_C._gil_probe_result(), total))
        _C._gil_probe_release()

    _C._gil_probe_arm(timeout_s)
    t = threading.Thread(target=other)
    t.start()
    try:
        call()
    finally:
        finished.set()
        t.join()
    assert _C._gil_probe_result() == "released", _C._gil_probe_result()
    # The other thread did all its Python while the call was waiting inside.
    assert seen == [("waiting", work * (work - 1) // 2)], seen


def test_the_gil_probe_catches_a_call_that_keeps_the_gil(session):
    # The probe has teeth: armed but consumed by nothing (as a binding that
    # never released would leave it), it reports so instead of "released".
    from oneflow_sbp import _C
    _C._gil_probe_arm(0.05)
    assert _C._gil_probe_result() == "armed"
    with pytest.raises(AssertionError, match="armed"):
        _assert_python_runs_inside(lambda: None, timeout_s=0.05)
    with pytest.raises(ValueError, match="timeout_s"):
        _C._gil_probe_arm(0)
    # A waiting call that nobody lets go times out on its own, never hangs.
    _C._gil_probe_arm(0.05)
    ofs.plan_boxing((4, 4), "f32", "cpu:0-1", "S(0)", "B")
    assert _C._gil_probe_result() == "timed out"


def test_the_gil_is_released_while_the_engine_works(session):
    p = ofs.placement("cpu:0-1")
    a = ofs.tensor(np.ones((256, 256), np.float32), placement=p, sbp=sbp.split(0))
    b = ofs.tensor(np.ones((256, 256), np.float32), placement=p, sbp=sbp.broadcast)
    ofs.matmul(a, b)  # the world has its ranks: the probed release is the step's
    out = []
    _assert_python_runs_inside(lambda: out.append(ofs.matmul(a, b)))
    np.testing.assert_allclose(out[0].numpy(), np.full((256, 256), 256.0))


def test_the_gil_is_released_while_inferring_and_planning(session):
    import itertools
    fresh = itertools.count(1)  # a new shape per call: nothing comes from a cache
    for op, p, split, bcast in [("matmul", "cpu:0-3 [2,2]", "(S(0),B)", "(B,B)"),
                                ("batch_matmul", "cpu:0-7 [2,2,2]", "(S(0),B,B)", None)]:
        rows = 8 * next(fresh)
        if op == "batch_matmul":
            a = b = ((rows, 16, 16), "f32", split)
        else:
            a, b = ((rows, 16), "f32", split), ((16, 16), "f32", bcast)
        got = []
        _assert_python_runs_inside(lambda: got.append(ofs.infer(op, [a, b], placement=p)))
        assert got[0].op == op
    shape = (16 * next(fresh), 16)
    plans = []
    _assert_python_runs_inside(lambda: plans.append(
        ofs.plan_boxing(shape, "f32", "cpu:0-3 [2,2]", "(S(0),S(1))", "(S(1),P)")))
    assert plans[0].steps


def test_time_cpp_apply_takes_several_inputs(session, mesh22):
    # tools/bench/peers.py times add and matmul from C++ beside DTensor's;
    # only that the call runs and returns a positive time is checked.
    x = ofs.tensor(arange(8, 8), placement=mesh22, sbp=[Shard(0), Replicate()])
    w = ofs.tensor(arange(8, 8), placement=mesh22, sbp="(B, B)")
    assert session.time_cpp_apply(x, "relu", 3) > 0
    assert session.time_cpp_apply([x, x], "broadcast_add", 3) > 0
    assert session.time_cpp_apply([x, w], "matmul", 3) > 0
    with pytest.raises(ValueError, match="at least one tensor"):
        session.time_cpp_apply([], "relu", 1)
