#!/usr/bin/env bash
# Sweep: runs each libFuzzer target given as an argument for 60 s from its
# seed corpus. Needs --config=fuzz (clang): see fuzz/BUILD.
set -uo pipefail
work="${TEST_TMPDIR:-/tmp}/fuzz_sweep"
failed=0
for bin in "$@"; do
  t="$(basename "$bin")"
  mkdir -p "$work/$t"
  if "$bin" -max_total_time=60 -timeout=30 -rss_limit_mb=2048 -print_final_stats=1 \
      -artifact_prefix="${TEST_UNDECLARED_OUTPUTS_DIR:-$work}/$t-" \
      "$work/$t" "fuzz/corpus/$t" >"$work/$t.log" 2>&1; then
    echo "$t: ok, $(grep -o 'number_of_executed_units: [0-9]*' "$work/$t.log")"
  else
    echo "$t: FOUND"
    tail -40 "$work/$t.log"
    failed=1
  fi
done
exit $failed
