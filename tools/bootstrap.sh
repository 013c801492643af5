#!/usr/bin/env bash
# Installs exactly the Debian 12 packages the oneflow_sbp build needs.
# Idempotent: packages already present are left alone, and nothing is fetched
# when everything is installed. Needs root (or sudo) only when installing.
set -euo pipefail

packages=(
  bazel-bootstrap     # Bazel 4.2.3 (WORKSPACE mode)
  bazel-rules-java    # local stand-in for @rules_java (see WORKSPACE)
  g++
  protobuf-compiler   # protoc 3.21
  libprotobuf-dev     # libprotobuf 3.21
  libabsl-dev         # Abseil 20220623
  libgtest-dev        # GoogleTest 1.12
  libgmock-dev
  libbenchmark-dev    # Google Benchmark 1.7
  libeigen3-dev       # Eigen 3.4
  libssl-dev          # OpenSSL libcrypto: HMAC-SHA256 for the rendezvous store's job secret
  libgloo-dev         # Gloo (2022 snapshot): the multi-process communicator backend
  libasan8            # gcc 12 sanitizer runtimes: --config=asan (ASan + UBSan)
  libubsan1
  libtsan2            # --config=tsan
  clang-14            # --config=fuzz (fuzz/, tools/fuzz.sh)
  libclang-rt-14-dev  # libFuzzer, ASan and UBSan runtimes for clang-14
  pybind11-dev        # pybind11 2.10: the Python package's native module (python/)
  libicu-dev          # ICU 72: Unicode for the WordPiece tokenizer (io/)
  libonnx-dev         # ONNX 1.12's onnx.proto: the ONNX importer (importers/)
)

# The Python package builds against the python3 on PATH (its headers) and
# its tests run under it, with numpy (the package's one dependency), pytest
# and venv (the wheel test). Where that python3 comes from decides how:
#   - Debian's own (/usr/bin/python3, prefix /usr; or its include directory
#     is under /usr/include): Python.h comes from python3-dev, venv from
#     python3-venv, and pip refuses to install into it (PEP 668: the
#     EXTERNALLY-MANAGED marker), so numpy and pytest come from apt as well
#     (python3-numpy, python3-pytest). Inside a venv made from it pip works,
#     so only the headers and venv come from apt.
#   - any other (pyenv, a source build) has its own headers: pip install
#     numpy pytest for it.
# Run `tools/bootstrap.sh --python-plan [PYTHON]` to see the plan for an
# interpreter (default: python3 on PATH) without installing anything.
python_packages=(numpy pytest)
python_query='
import os, sys, sysconfig
include = sysconfig.get_paths()["include"]
try:
    import numpy, pytest
    ready = 1
except ImportError:
    ready = 0
marker = os.path.join(sysconfig.get_path("stdlib"), "EXTERNALLY-MANAGED")
print(sys.executable)
print(sys.base_prefix)
print(include)
print(int(os.path.isfile(os.path.join(include, "Python.h"))))
print(int(sys.prefix == sys.base_prefix and os.path.isfile(marker)))
print(ready)
'

# python_plan [PYTHON]: sets python_what (a description), python_apt (Debian
# packages) and python_pip (packages for PYTHON's pip). Fails with a message
# for an interpreter that is not Debian's and lacks its headers.
python_plan() {
  local py=${1:-python3}
  local exe base include header managed ready
  python_apt=()
  python_pip=()
  if ! command -v "$py" >/dev/null 2>&1; then
    python_what="none: Debian's python3 from apt"
    python_apt=(python3 python3-dev python3-venv python3-numpy python3-pytest)
    return 0
  fi
  { read -r exe && read -r base && read -r include && read -r header && read -r managed &&
      read -r ready; } < <("$py" -c "$python_query" 2>/dev/null) || {
    echo "bootstrap: $py could not report its configuration" >&2
    return 1
  }
  if [ "$base" = /usr ] || [[ "$include" == /usr/include/* ]]; then
    python_what="$exe (Debian's)"
    python_apt=(python3-dev python3-venv)
    if [ "$ready" != 1 ]; then
      if [ "$managed" = 1 ]; then
        python_apt+=(python3-numpy python3-pytest)
      else
        python_pip=("${python_packages[@]}")
      fi
    fi
    return 0
  fi
  if [ "$header" != 1 ]; then
    echo "bootstrap: $exe has no Python.h in $include; install that interpreter's headers" \
         "(or put Debian's /usr/bin/python3 first on PATH)" >&2
    return 1
  fi
  python_what="$exe (its own headers)"
  if [ "$ready" != 1 ]; then python_pip=("${python_packages[@]}"); fi
}

install_python_packages() {
  if [ ${#python_pip[@]} -eq 0 ]; then
    echo "bootstrap: python3 is $python_what; it has ${python_packages[*]}"
    return
  fi
  echo "bootstrap: pip install ${python_pip[*]} for $python_what"
  python3 -m pip install -q "${python_pip[@]}"
}

if [ "${1:-}" = --python-plan ]; then
  python_plan "${2:-python3}"
  echo "python3: $python_what"
  echo "apt: ${python_apt[*]}"
  echo "pip: ${python_pip[*]}"
  exit 0
fi
python_plan python3
packages+=("${python_apt[@]}")

missing=()
for p in "${packages[@]}"; do
  if ! dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed"; then
    missing+=("$p")
  fi
done

if [ ${#missing[@]} -eq 0 ]; then
  echo "bootstrap: all ${#packages[@]} packages present"
  install_python_packages
  exit 0
fi

echo "bootstrap: installing ${missing[*]}"
sudo_cmd=()
if [ "$(id -u)" -ne 0 ]; then sudo_cmd=(sudo); fi
export DEBIAN_FRONTEND=noninteractive
"${sudo_cmd[@]}" apt-get update -qq
"${sudo_cmd[@]}" apt-get install -y -qq --no-install-recommends "${missing[@]}"
install_python_packages
echo "bootstrap: done"
