"""Ctrl-C interrupts a long call cleanly: KeyboardInterrupt at once, and the
session still works afterwards."""
import signal
import subprocess
import sys
import time

from build_paths import child_env

CHILD = r'''
import sys, time
import numpy as np
import oneflow_sbp as ofs
from oneflow_sbp import sbp

def kernel(x):
    time.sleep(3.0)  # a long step on every rank
    return x

ofs.register_op("py_slow", inputs=["x"], outputs=["y"],
                infer_shape=lambda ctx: [(ctx.input_shape("x"), ctx.input_dtype("x"))],
                sbp_rule=lambda ctx: ctx.builder().split(ctx.inputs(), 0).split(ctx.outputs(), 0).build(),
                kernel=kernel)
x = ofs.tensor(np.ones((4, 2), np.float32), placement=ofs.placement("cpu:0-1"), sbp=sbp.split(0))
print("ready", flush=True)
start = time.monotonic()
try:
    ofs.apply("py_slow", x)
    print("not interrupted", flush=True)
except KeyboardInterrupt:
    print(f"interrupted after {time.monotonic() - start:.2f}s", flush=True)
y = ofs.relu(x)  # waits for the interrupted step, then runs
print("after:", float(y.numpy().sum()), flush=True)
'''


def test_ctrl_c_interrupts_a_long_call():
    p = subprocess.Popen([sys.executable, "-c", CHILD], stdout=subprocess.PIPE,
                         stderr=subprocess.PIPE, text=True, env=child_env())
    assert p.stdout.readline().strip() == "ready"
    time.sleep(0.5)
    p.send_signal(signal.SIGINT)
    out, err = p.communicate(timeout=60)
    assert p.returncode == 0, out + err
    lines = out.splitlines()
    assert lines[0].startswith("interrupted after"), out + err
    assert float(lines[0].split()[2].rstrip("s")) < 2.0  # well before the 3 s step ends
    assert lines[1] == "after: 8.0"
