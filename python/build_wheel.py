#!/usr/bin/env python3
"""Writes the oneflow_sbp wheel from the package sources and the built module.

A wheel is a zip with the package files plus a .dist-info folder (METADATA,
WHEEL, RECORD with a sha256 per file). Shared libraries the module links
that a bare Debian 12 machine lacks (Abseil, protobuf, Gloo: Debian dev
packages here) are copied into oneflow_sbp/_libs, which the module's rpath
names, so `pip install` of the wheel is the only step on a fresh machine.
"""
import argparse
import base64
import hashlib
import os
import subprocess
import zipfile

NAME = "oneflow_sbp"
VERSION = "0.1.0"
# Present on every glibc Linux with a C++ runtime; never bundled.
SYSTEM_LIBS = ("linux-vdso", "ld-linux", "libc.so", "libm.so", "libpthread", "libdl.so",
               "librt.so", "libstdc++", "libgcc_s")


def package_path(src):
    """python/oneflow_sbp/x.py (or bazel-out/.../python/oneflow_sbp/_C.so) -> oneflow_sbp/x.py."""
    parts = src.split("/")
    i = len(parts) - 1 - parts[::-1].index(NAME)
    return "/".join(parts[i:])


def bundled_libs(module):
    out = subprocess.run(["ldd", module], check=True, capture_output=True, text=True).stdout
    libs = []
    for line in out.splitlines():
        line = line.strip()
        if "=>" not in line:
            continue
        name, rest = [s.strip() for s in line.split("=>", 1)]
        path = rest.split(" (")[0].strip()
        if not path.startswith("/") or any(name.startswith(s) for s in SYSTEM_LIBS):
            continue
        libs.append((name, os.path.realpath(path)))
    return sorted(set(libs))


def record_line(arcname, data):
    digest = base64.urlsafe_b64encode(hashlib.sha256(data).digest()).rstrip(b"=").decode()
    return f"{arcname},sha256={digest},{len(data)}"


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--out", required=True)
    ap.add_argument("--tag", required=True)
    ap.add_argument("files", nargs="+")
    a = ap.parse_args()
    entries = []
    for src in sorted(a.files):
        arc = package_path(src)
        with open(src, "rb") as f:
            entries.append((arc, f.read(), 0o755 if arc.endswith(".so") else 0o644))
        if arc.endswith("_C.so"):
            for name, path in bundled_libs(src):
                with open(path, "rb") as f:
                    entries.append((f"{NAME}/_libs/{name}", f.read(), 0o755))
    dist = f"{NAME}-{VERSION}.dist-info"
    metadata = (f"Metadata-Version: 2.1\nName: {NAME}\nVersion: {VERSION}\n"
                "Summary: OneFlow-style SBP inference, boxing and global tensors\n"
                "Requires-Python: ==3.%s.*\nRequires-Dist: numpy\n" % a.tag[3:])
    wheel = (f"Wheel-Version: 1.0\nGenerator: oneflow_sbp build_wheel.py\nRoot-Is-Purelib: false\n"
             f"Tag: {a.tag}-{a.tag}-linux_x86_64\n")
    entries.append((f"{dist}/METADATA", metadata.encode(), 0o644))
    entries.append((f"{dist}/WHEEL", wheel.encode(), 0o644))
    record = [record_line(arc, data) for arc, data, _ in entries] + [f"{dist}/RECORD,,"]
    entries.append((f"{dist}/RECORD", ("\n".join(record) + "\n").encode(), 0o644))
    with zipfile.ZipFile(a.out, "w", zipfile.ZIP_DEFLATED) as z:
        for arc, data, mode in entries:
            info = zipfile.ZipInfo(arc, date_time=(2026, 1, 1, 0, 0, 0))
            info.external_attr = mode << 16
            info.compress_type = zipfile.ZIP_DEFLATED
            z.writestr(info, data)


if __name__ == "__main__":
    main()
