#!/usr/bin/env bash
# tools/check_layers.py on a tree made here: an include up a layer, a
# sideways include between the device kernel folders and a Python import up
# the package's layers each fail, naming the file and what it reaches.
#
#   layers_check_test.sh <check_layers.py>
set -u
CHECK="$(cd "$(dirname "$1")" && pwd)/$(basename "$1")"
TMP="${TEST_TMPDIR:-$(mktemp -d)}/tree"
failures=0
fail() { echo "FAIL: $*"; failures=$((failures + 1)); }

rm -rf "$TMP"
mkdir -p "$TMP/oneflow_sbp" "$TMP/eager" "$TMP/ops/kernels/cpu" "$TMP/ops/kernels/cuda" \
  "$TMP/python/oneflow_sbp"
touch "$TMP/eager/apply.h" "$TMP/ops/kernels/cuda/launch.h" "$TMP/python/oneflow_sbp/tensor.py"
echo '#include "eager/apply.h"' >"$TMP/oneflow_sbp/shape.cc"
echo '#include "ops/kernels/cuda/launch.h"' >"$TMP/ops/kernels/cpu/relu.cc"
printf 'from .tensor import Tensor\nfrom . import _C\n' >"$TMP/python/oneflow_sbp/sbp.py"
(cd "$TMP" && python3 "$CHECK") >"$TMP.out" 2>&1
rc=$?
[[ "$rc" == 1 ]] || fail "exit $rc, want 1"
for want in \
  "oneflow_sbp/shape.cc (values and inference) includes eager/apply.h (eager and graph): up a layer" \
  "ops/kernels/cpu/relu.cc includes ops/kernels/cuda/launch.h: sideways between device folders" \
  "python/oneflow_sbp/sbp.py (values and the session) imports tensor (global tensors): up a layer" \
  "ops/kernels/cpu/int_arith.h is listed as device-neutral but ops/kernels/cuda no longer includes it"; do
  grep -qF -- "$want" "$TMP.out" || fail "want '$want' in: $(cat "$TMP.out")"
done
grep -q "imports _C" "$TMP.out" && fail "an import down a layer was reported"

if [[ $failures -gt 0 ]]; then
  echo "$failures failed"
  exit 1
fi
echo "layers: up-layer includes, device sideways includes and Python imports are caught"
