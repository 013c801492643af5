#!/usr/bin/env bash
# Replays the `sbp infer` sweep (tests/testdata/infer_sweep_calls.txt, made
# by tools/gen_infer_sweep.py) and compares every answer, exit code and
# stderr byte for byte with the golden file, which was generated before the
# selection pipeline was refactored into stages.
#
#   infer_sweep_test.sh <sbp> <calls> <golden>           compare
#   infer_sweep_test.sh <sbp> <calls> <golden> --update  rewrite the golden
set -u
SBP="$1"; CALLS="$2"; GOLDEN="$3"; MODE="${4:-}"
TMP="${TEST_TMPDIR:-$(mktemp -d)}"
ACTUAL="$TMP/infer_sweep_actual.txt"
: >"$ACTUAL"
while IFS=$'\t' read -r -a args; do
  [[ ${#args[@]} -eq 0 ]] && continue
  printf '### %s\n' "${args[*]}" >>"$ACTUAL"
  "$SBP" infer "${args[@]}" >>"$ACTUAL" 2>&1
  printf 'exit %d\n' "$?" >>"$ACTUAL"
done <"$CALLS"
if [[ "$MODE" == "--update" ]]; then
  cp "$ACTUAL" "$GOLDEN"
  echo "wrote $(grep -c '^###' "$GOLDEN") answers to $GOLDEN"
  exit 0
fi
if ! diff -u "$GOLDEN" "$ACTUAL" >"$TMP/diff"; then
  head -100 "$TMP/diff"
  echo "FAIL: sbp infer answers differ from the golden sweep ($(grep -c '^+###\|^-###' "$TMP/diff") headers touched)"
  exit 1
fi
echo "PASS: $(grep -c '^###' "$GOLDEN") answers identical"
