"""SPMD under the launcher: the same script in 4 Gloo processes."""
import os
import subprocess
import sys

import pytest

import oneflow_sbp
from build_paths import sbp_binary

HERE = os.path.dirname(os.path.abspath(__file__))
SCRIPT = os.path.join(os.path.dirname(HERE), "examples", "spmd_launch.py")


def launch(*extra, nproc=4):
    env = dict(os.environ)
    # The package this test imports, for the rank processes too.
    package_root = os.path.dirname(os.path.dirname(os.path.abspath(oneflow_sbp.__file__)))
    env["PYTHONPATH"] = os.pathsep.join([package_root] + sys.path)
    return subprocess.run([sbp_binary(), "launch", f"--nproc={nproc}", "--rank_prefix=yes", "--",
                           sys.executable, SCRIPT, *extra],
                          capture_output=True, text=True, timeout=120, env=env)


def test_four_processes_run_one_script():
    r = launch()
    assert r.returncode == 0, r.stdout + r.stderr
    # The launcher writes each rank's lines whole, prefixed "[rank N] ".
    lines = sorted(line.split("] ", 1)[1] for line in r.stdout.splitlines() if "] rank " in line)
    assert len(lines) == 4, r.stdout
    assert all(line.endswith("ok") for line in lines), r.stdout
    # Every rank computed the same loss.
    assert len({line.split("loss ")[1].split()[0] for line in lines}) == 1


def test_a_failing_rank_is_named_and_nothing_hangs():
    r = launch("--fail_rank=2")
    assert r.returncode != 0
    assert "rank 2" in r.stdout + r.stderr


def test_a_late_rank_is_a_timeout_error():
    r = launch("--slow_rank=3", "--timeout=0.5")
    lines = [line for line in r.stdout.splitlines() if "TimeoutError" in line]
    assert len(lines) >= 1, r.stdout + r.stderr
    assert "deadline" in lines[0].lower() or "timed out" in lines[0].lower() or "timeout" in lines[0].lower()


def test_init_outside_a_launcher_is_embedded(monkeypatch):
    import oneflow_sbp as ofs
    for v in ("RANK", "WORLD_SIZE", "MASTER_ADDR", "MASTER_PORT"):
        monkeypatch.delenv(v, raising=False)
    assert not ofs.is_launched()
    s = ofs.init(world_size=2)
    assert not s.launched and s.local_ranks == [0, 1]
    ofs.shutdown()
    with pytest.raises(Exception, match="RANK|launch"):
        ofs.init(launched=True, timeout=2)
    ofs.shutdown()
