"""SPMD under the launcher: the same script in 4 Gloo processes."""
import os
import re
import subprocess
import sys
import time

import pytest

from build_paths import child_env, sbp_binary

HERE = os.path.dirname(os.path.abspath(__file__))
SCRIPT = os.path.join(os.path.dirname(HERE), "examples", "spmd_launch.py")


def launch(*extra, nproc=("--nproc=4",)):
    # child_env: the package this test imports, for the rank processes too.
    return subprocess.run([sbp_binary(), "launch", *nproc, "--rank_prefix=yes", "--",
                           sys.executable, SCRIPT, *extra],
                          capture_output=True, text=True, timeout=120, env=child_env())


# torchrun's and OneFlow's launchers spell it --nproc_per_node.
@pytest.mark.parametrize("nproc", [("--nproc=4",), ("--nproc_per_node", "4")])
def test_four_processes_run_one_script(nproc):
    r = launch(nproc=nproc)
    assert r.returncode == 0, r.stdout + r.stderr
    # The launcher writes each rank's lines whole, prefixed "[rank N] ".
    lines = sorted(line.split("] ", 1)[1] for line in r.stdout.splitlines() if "] rank " in line)
    assert len(lines) == 4, r.stdout
    assert all(line.endswith("ok") for line in lines), r.stdout
    # Every rank computed the same loss.
    assert len({line.split("loss ")[1].split()[0] for line in lines}) == 1


def test_a_failing_rank_is_named_and_nothing_hangs():
    # Rank 2 exits with code 7; the others sleep 60 s outside any collective
    # (the collective timeout is 60 s too), so only the launcher ends them.
    r = launch("--fail_rank=2", "--timeout=60")
    ended = time.time()
    assert r.returncode != 0, r.stdout + r.stderr
    # The launcher's own report: the failing rank, its exit code, and the
    # ranks it terminated.
    assert re.search(r"launch failed: rank 2 \(pid \d+\) exited with code 7; terminated ranks 0,1,3",
                     r.stderr), r.stderr
    assert "was not stopped" not in r.stdout, r.stdout
    # Stopped promptly: the launcher's 2 s grace, then SIGTERM.
    failed_at = float(re.search(r"\[rank 2\] rank 2: failing on purpose at ([0-9.]+)",
                                r.stdout).group(1))
    assert ended - failed_at < 20, f"the other ranks ran {ended - failed_at:.1f} s after rank 2 failed"


def test_a_late_rank_is_a_timeout_error():
    # The timeout also bounds the rendezvous in init(): 0.5 s was too little
    # for four Pythons starting on 2 busy vCPUs ("key '3' did not appear").
    r = launch("--slow_rank=3", "--late=8", "--timeout=3")
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
