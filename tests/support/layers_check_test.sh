#!/usr/bin/env bash
# tools/check_layers.py on a tree made here: an include up a layer, a
# sideways include between the device kernel folders, a file in another
# folder's namespace, two headers of one name and a Python import up the package's layers each fail,
# naming the file and what it reaches.
#
#   layers_check_test.sh <check_layers.py>
set -u
CHECK="$(cd "$(dirname "$1")" && pwd)/$(basename "$1")"
TMP="${TEST_TMPDIR:-$(mktemp -d)}/tree"
failures=0
fail() { echo "FAIL: $*"; failures=$((failures + 1)); }

rm -rf "$TMP"
mkdir -p "$TMP/oneflow_sbp/values" "$TMP/eager" "$TMP/kernels/cpu" "$TMP/kernels/cuda" \
  "$TMP/runtime" "$TMP/python/oneflow_sbp"
touch "$TMP/eager/apply.h" "$TMP/kernels/cuda/launch.h" "$TMP/python/oneflow_sbp/tensor.py"
echo '#include "eager/apply.h"' >"$TMP/oneflow_sbp/values/shape.cc"
echo '#include "kernels/cuda/launch.h"' >"$TMP/kernels/cpu/relu.cc"
# a file in the wrong namespace; a forward declaration of another one is fine
printf 'namespace oneflow_sbp::comm {\nclass Communicator;\n}\nnamespace oneflow_sbp::boxing {\nint x;\n}\n' \
  >"$TMP/runtime/executor.cc"
printf 'namespace oneflow_sbp::comm {\nclass Communicator;\n}  // namespace oneflow_sbp::comm\nnamespace oneflow_sbp::runtime {\nnamespace {\nint y;\n}\n}\n' \
  >"$TMP/runtime/step.cc"
touch "$TMP/eager/step.h" "$TMP/runtime/step.h"
printf 'from .tensor import Tensor\nfrom . import _C\n' >"$TMP/python/oneflow_sbp/sbp.py"
(cd "$TMP" && python3 "$CHECK") >"$TMP.out" 2>&1
rc=$?
[[ "$rc" == 1 ]] || fail "exit $rc, want 1"
for want in \
  "oneflow_sbp/values/shape.cc (values) includes eager/apply.h (eager and graph): up a layer" \
  "kernels/cpu/relu.cc includes kernels/cuda/launch.h: sideways between device folders" \
  "runtime/executor.cc: namespace oneflow_sbp::boxing, but runtime/ is oneflow_sbp::runtime" \
  "python/oneflow_sbp/sbp.py (values and the session) imports tensor (global tensors): up a layer" \
  "eager/step.h and runtime/step.h: two headers named step.h" \
  "5 problems"; do
  grep -qF -- "$want" "$TMP.out" || fail "want '$want' in: $(cat "$TMP.out")"
done
grep -q "step.cc" "$TMP.out" && fail "a forward declaration or a nested namespace was reported"
grep -q "imports _C" "$TMP.out" && fail "an import down a layer was reported"

if [[ $failures -gt 0 ]]; then
  echo "$failures failed"
  exit 1
fi
echo "layers: up-layer includes, device sideways includes, foreign namespaces, shared header names and Python imports are caught"
