"""The wheel that `bazel build //python:wheel` writes installs into a fresh
venv and works there, away from the source tree (no network: numpy comes
from this interpreter's site-packages)."""
import os
import re
import subprocess
import sys
import zipfile

from build_paths import wheel as wheel_path

# Libraries every glibc Linux with a C++ runtime has; anything else the
# module needs must be in the wheel's oneflow_sbp/_libs.
BASE_SYSTEM_LIBS = re.compile(r"(libc|libm|libpthread|libdl|librt|libstdc\+\+|libgcc_s)\.so\.\d+$"
                              r"|ld-linux(-x86-64)?\.so\.\d+$")


def needed(path):
    """The DT_NEEDED entries of a shared library."""
    out = subprocess.run(["readelf", "--dynamic", "--wide", path], check=True, capture_output=True,
                         text=True).stdout
    return re.findall(r"\(NEEDED\)\s+Shared library: \[([^\]]+)\]", out)


def unresolved_libs(package_dir):
    """(library, what it needs) for every dependency of the _C extension,
    followed through the bundled _libs, that neither _libs nor the base
    system provides. The same resolution the module's RPATH ($ORIGIN/_libs)
    gives a machine that has only the base libraries."""
    libs = os.path.join(package_dir, "_libs")
    bundled = set(os.listdir(libs)) if os.path.isdir(libs) else set()
    module = next(os.path.join(package_dir, f) for f in os.listdir(package_dir)
                  if f.startswith("_C") and f.endswith(".so"))
    missing, seen, todo = [], set(), [module]
    while todo:
        lib = todo.pop()
        for name in needed(lib):
            if name in bundled:
                if name not in seen:
                    seen.add(name)
                    todo.append(os.path.join(libs, name))
            elif not BASE_SYSTEM_LIBS.fullmatch(name):
                missing.append((os.path.basename(lib), name))
    return sorted(missing)


def unpack(wheel, into, leave_out=()):
    with zipfile.ZipFile(wheel) as z:
        for name in z.namelist():
            if name.endswith(".so") or ".so." in name:
                if os.path.basename(name) not in leave_out:
                    z.extract(name, into)
    return os.path.join(into, "oneflow_sbp")


def test_every_library_the_module_needs_is_bundled_or_base(tmp_path):
    assert unresolved_libs(unpack(wheel_path(), tmp_path / "whole")) == []
    # The check sees a library missing from the wheel, directly needed by
    # the module or only through another bundled library.
    assert unresolved_libs(unpack(wheel_path(), tmp_path / "a", ["libgloo.so.0"])) == [
        ("_C.so", "libgloo.so.0")]
    assert unresolved_libs(unpack(wheel_path(), tmp_path / "b", ["libnl-3.so.200"])) == [
        ("libibverbs.so.1", "libnl-3.so.200"), ("libnl-route-3.so.200", "libnl-3.so.200")]


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
    # This machine has every Debian library the module links, so importing
    # proves nothing about a bare one: the installed copy must bring its own.
    assert unresolved_libs(os.path.dirname(out[0])) == []
