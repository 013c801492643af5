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
)

# The Python package builds against the python3 on PATH and its tests run
# under it: numpy (the package's one dependency) and pytest for that
# interpreter, from the package index.
python_packages=(numpy pytest)
python_ready() {
  python3 -c "import numpy, pytest" 2>/dev/null
}
install_python_packages() {
  if python_ready; then
    echo "bootstrap: python3 has ${python_packages[*]}"
    return
  fi
  echo "bootstrap: pip install ${python_packages[*]} for $(command -v python3)"
  python3 -m pip install -q "${python_packages[@]}"
}

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
