#!/usr/bin/env bash
# Drives tools/reference/oneflow_oracle.py over every world size its calls
# need and writes the golden file. OneFlow aborts its processes on some
# calls (a shard that would be empty); the call that was running is then
# recorded as "aborted" and the run resumes after it.
#
#   run_oneflow_oracle.sh PYTHON GOLDEN
#
# PYTHON is a Python 3.10 with oneflow==0.9.0 (see the script's docstring).
set -u
PY="$1"; GOLDEN="$2"
HERE="$(cd "$(dirname "$0")" && pwd)"
ROOT="$(cd "$HERE/../.." && pwd)"
WORK="$(mktemp -d)"
SITE="$("$PY" -c 'import sysconfig; print(sysconfig.get_paths()["purelib"])')"
export LD_LIBRARY_PATH="$(ls -d "$SITE"/nvidia/*/lib | tr '\n' :)${LD_LIBRARY_PATH:-}"
python3 "$HERE/oneflow_oracle.py" calls "$ROOT/tests/testdata/infer_sweep_calls.txt" >"$WORK/calls"
echo "$(wc -l <"$WORK/calls") calls"
port=29600
for world in 2 3 4 6 8; do
  start=0
  retries=0
  while :; do
    # A fresh port each launch: a killed run's processes may still hold the last.
    port=$((port + 1))
    "$PY" -m oneflow.distributed.launch --nproc_per_node "$world" --master_port "$port" \
        "$HERE/oneflow_oracle.py" run "$WORK/calls" "$WORK/answers" "$start" \
        >"$WORK/log.$world" 2>&1
    rc=$?
    pkill -f "oneflow_oracle.py run $WORK" 2>/dev/null; sleep 1
    [[ -f "$WORK/answers.started" ]] || break
    index="$(cat "$WORK/answers.started")"
    rm -f "$WORK/answers.started"
    if [[ -z "$index" ]]; then  # died before its first call: launch again
      retries=$((retries + 1))
      (( retries < 3 )) || { echo "world $world: cannot start"; exit 1; }
      continue
    fi
    line="$(sed -n "$((index + 1))p" "$WORK/calls")"
    why="$(grep -m1 -o 'Check failed.*' "$WORK/log.$world" | tr '\t' ' ' | cut -c1-160)"
    printf '%s\t%s\taborted: exit %s %s\n' "$index" "$line" "$rc" "$why" >>"$WORK/answers"
    echo "world $world: call $index aborted (exit $rc)"
    start=$((index + 1))
  done
  echo "world $world done"
done
{
  echo "# $("$PY" -c 'import oneflow; print("oneflow", oneflow.__version__)'), CPU, 2 to 8 processes (tools/reference/run_oneflow_oracle.sh)"
  sort -n -k1,1 "$WORK/answers" | cut -f2-
} >"$GOLDEN"
echo "wrote $(grep -vc '^#' "$GOLDEN") answers to $GOLDEN"
