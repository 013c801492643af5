"""The wheel that `bazel build //python:wheel` writes installs into a fresh
venv and works there, away from the source tree (no network: numpy comes
from this interpreter's site-packages)."""
import os
import subprocess
import sys
import zipfile

from build_paths import wheel as wheel_path


def test_wheel_contents():
    with zipfile.ZipFile(wheel_path()) as z:
        names = z.namelist()
    assert "oneflow_sbp/_C.so" in names and "oneflow_sbp/__init__.py" in names
    assert "oneflow_sbp/nn/functional.py" in names
    assert any(n.startswith("oneflow_sbp/_libs/libgloo") for n in names)
    assert any(n.endswith(".dist-info/RECORD") for n in names)


def test_installs_in_a_fresh_venv(tmp_path):
    venv = tmp_path / "v"
    subprocess.run([sys.executable, "-m", "venv", "--system-site-packages", str(venv)], check=True,
                   timeout=120)
    py = str(venv / "bin" / "python")
    subprocess.run([py, "-m", "pip", "install", "-q", "--no-index", "--no-deps", wheel_path()],
                   check=True, timeout=120)
    code = ("import numpy as np, oneflow_sbp as ofs\n"
            "from oneflow_sbp import sbp\n"
            "p = ofs.placement('cpu', ranks=[[0, 1], [2, 3]])\n"
            "x = ofs.tensor(np.ones((4, 4), np.float32), placement=p, sbp=[sbp.split(0), sbp.broadcast])\n"
            "print(ofs.__file__)\n"
            "print(ofs.sum(ofs.relu(x)).item())\n")
    env = {k: v for k, v in os.environ.items() if k != "PYTHONPATH"}
    out = subprocess.run([py, "-c", code], check=True, capture_output=True, text=True,
                         cwd=str(tmp_path), env=env, timeout=120).stdout.splitlines()
    assert out[0].startswith(str(venv)), out  # the installed copy, not the build tree
    assert out[1] == "16.0"
