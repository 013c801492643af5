"""tools/bootstrap.sh chooses how to get Python.h, venv, numpy and pytest
for the python3 it finds: apt for Debian's own /usr/bin/python3 (no headers
without python3-dev, pip refused by PEP 668), pip for an interpreter with
its own headers (pyenv here). `--python-plan PYTHON` prints the choice
without installing anything. Interpreters are faked by scripts that answer
bootstrap's one query, so every case runs on any machine."""
import os
import subprocess
import sys

import pytest

from build_paths import bootstrap_script


def plan(python, env=None):
    r = subprocess.run(["bash", bootstrap_script(), "--python-plan", python], capture_output=True,
                       text=True, timeout=60, env=env)
    lines = dict(line.split(": ", 1) if ": " in line else (line.rstrip(":"), "")
                 for line in r.stdout.splitlines())
    return r, lines


def fake_python(tmp_path, name, exe, base_prefix, include, has_header, externally_managed, ready):
    """A script answering bootstrap's query as such an interpreter would:
    sys.executable, sys.base_prefix, the include dir, Python.h there?, pip
    refused (PEP 668)?, numpy and pytest importable?"""
    path = tmp_path / name
    answer = [exe, base_prefix, include, str(int(has_header)), str(int(externally_managed)),
              str(int(ready))]
    path.write_text("#!/bin/sh\nprintf '%s\\n' " + " ".join(f"'{a}'" for a in answer) + "\n")
    path.chmod(0o755)
    return str(path)


def test_stock_debian_python_gets_everything_from_apt(tmp_path):
    py = fake_python(tmp_path, "py", "/usr/bin/python3", "/usr", "/usr/include/python3.11",
                     has_header=False, externally_managed=True, ready=False)
    r, p = plan(py)
    assert r.returncode == 0, r.stderr
    assert p["python3"] == "/usr/bin/python3 (Debian's)"
    assert p["apt"].split() == ["python3-dev", "python3-venv", "python3-numpy", "python3-pytest"]
    assert p["pip"] == ""


def test_debian_python_that_has_numpy_needs_only_headers_and_venv(tmp_path):
    py = fake_python(tmp_path, "py", "/usr/bin/python3", "/usr", "/usr/include/python3.11",
                     has_header=True, externally_managed=True, ready=True)
    _, p = plan(py)
    assert p["apt"].split() == ["python3-dev", "python3-venv"] and p["pip"] == ""


def test_a_venv_of_debian_python_uses_pip_for_numpy(tmp_path):
    # Inside a venv PEP 668 does not apply; the headers are still the base's.
    py = fake_python(tmp_path, "py", "/home/u/v/bin/python3", "/usr", "/usr/include/python3.11",
                     has_header=False, externally_managed=False, ready=False)
    _, p = plan(py)
    assert p["apt"].split() == ["python3-dev", "python3-venv"]
    assert p["pip"].split() == ["numpy", "pytest"]


def test_an_interpreter_with_its_own_headers_uses_pip(tmp_path):
    root = "/home/u/.pyenv/versions/3.11.7"
    py = fake_python(tmp_path, "py", root + "/bin/python3", root, root + "/include/python3.11",
                     has_header=True, externally_managed=False, ready=False)
    _, p = plan(py)
    assert p["python3"] == root + "/bin/python3 (its own headers)"
    assert p["apt"] == "" and p["pip"].split() == ["numpy", "pytest"]
    ready = fake_python(tmp_path, "ready", root + "/bin/python3", root, root + "/include/python3.11",
                        has_header=True, externally_managed=False, ready=True)
    _, p = plan(ready)
    assert p["apt"] == "" and p["pip"] == ""  # idempotent: nothing left to do


def test_a_non_debian_interpreter_without_headers_is_refused(tmp_path):
    py = fake_python(tmp_path, "py", "/opt/py/bin/python3", "/opt/py", "/opt/py/include/python3.11",
                     has_header=False, externally_managed=False, ready=True)
    r, _ = plan(py)
    assert r.returncode != 0 and "no Python.h in /opt/py/include/python3.11" in r.stderr


def test_no_python3_at_all_gets_debians(tmp_path):
    _, p = plan(str(tmp_path / "no-such-python3"))
    assert p["apt"].split()[:2] == ["python3", "python3-dev"]


@pytest.mark.skipif(not os.path.exists("/usr/bin/python3"), reason="no /usr/bin/python3 here")
def test_the_real_debian_python3():
    r, p = plan("/usr/bin/python3")
    assert r.returncode == 0, r.stderr
    assert p["python3"].endswith("(Debian's)")
    assert p["apt"].split()[:2] == ["python3-dev", "python3-venv"]


def test_the_interpreter_running_these_tests():
    # It has numpy and pytest, so nothing is left for pip.
    r, p = plan(sys.executable)
    assert r.returncode == 0, r.stderr
    debian = sys.base_prefix == "/usr"
    assert p["python3"] == sys.executable + (" (Debian's)" if debian else " (its own headers)")
    assert p["pip"] == ""
    assert p["apt"].split() == (["python3-dev", "python3-venv"] if debian else [])
