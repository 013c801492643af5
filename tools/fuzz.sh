#!/usr/bin/env bash
# Runs every libFuzzer target (fuzz/) for SECONDS each (default 60), one at
# a time, under --config=fuzz (clang-14, ASan, UBSan).
#
#   tools/fuzz.sh [SECONDS] [TARGET...]
#
# Each target starts from its seed corpus in fuzz/corpus/<target>/ and
# grows a working corpus in $FUZZ_WORK/<target>/ (default
# /tmp/oneflow_sbp_fuzz), kept between runs; the repo's corpus is not
# written. Crashes, timeouts and leaks land in $FUZZ_WORK/artifacts/; copy
# each one into fuzz/corpus/<target>/ once fixed, so the replay tests keep
# it. Prints one line per target: executions, coverage, result. Exits 1 if
# any target found something.
set -uo pipefail
cd "$(dirname "$0")/.."

seconds="${1:-60}"
shift || true
targets=("$@")
if [ ${#targets[@]} -eq 0 ]; then
  targets=(parse_fuzzer request_fuzzer infer_fuzzer planner_fuzzer executor_fuzzer safetensors_fuzzer store_fuzzer program_fuzzer onnx_import_fuzzer)
fi
work="${FUZZ_WORK:-/tmp/oneflow_sbp_fuzz}"
mkdir -p "$work/artifacts"

labels=()
for t in "${targets[@]}"; do labels+=("//fuzz:$t"); done
bazel build --config=fuzz "${labels[@]}" || exit 2
bin="$(bazel info --config=fuzz bazel-bin 2>/dev/null)/fuzz"

failed=0
for t in "${targets[@]}"; do
  mkdir -p "$work/$t"
  log="$work/$t.log"
  # -timeout: an input that takes longer is a finding (unbounded work; 30 s
  # under ASan is a few seconds in a normal build); -rss_limit_mb likewise
  # for memory.
  "$bin/$t" -max_total_time="$seconds" -timeout=30 -rss_limit_mb=2048 \
    -print_final_stats=1 -artifact_prefix="$work/artifacts/$t-" \
    "$work/$t" "fuzz/corpus/$t" >"$log" 2>&1
  rc=$?
  execs=$(grep -o 'stat::number_of_executed_units: [0-9]*' "$log" | awk '{print $2}')
  cov=$(grep -o 'cov: [0-9]*' "$log" | tail -1 | awk '{print $2}')
  if [ $rc -eq 0 ]; then
    result="ok"
  else
    result="FOUND (exit $rc; see $log)"
    failed=1
  fi
  printf '%-16s %6ss  %10s execs  cov %6s  %s\n' "$t" "$seconds" "${execs:-?}" "${cov:-?}" "$result"
done
exit $failed
