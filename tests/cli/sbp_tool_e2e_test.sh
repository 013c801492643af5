#!/usr/bin/env bash
# End-to-end test of the built `sbp` binary: stdout, stderr and exit codes.
#
#   sbp_tool_e2e_test.sh <path to sbp>
set -u

SBP="${1:?usage: $0 <path to sbp>}"
if [[ ! -x "$SBP" && -n "${TEST_SRCDIR:-}" ]]; then
  SBP="$TEST_SRCDIR/${TEST_WORKSPACE:-__main__}/cli/sbp"
fi
[[ -x "$SBP" ]] || { echo "FAIL: sbp binary not found at $SBP"; exit 1; }

TMP="${TEST_TMPDIR:-$(mktemp -d)}"
OUT="$TMP/stdout"
ERR="$TMP/stderr"
failures=0

fail() {
  echo "FAIL: $*"
  echo "--- stdout:"; cat "$OUT"
  echo "--- stderr:"; cat "$ERR"
  failures=$((failures + 1))
}

# run ARGS...: runs sbp, leaving the exit code in $rc.
run() {
  "$SBP" "$@" >"$OUT" 2>"$ERR"
  rc=$?
}

expect_rc() {  # expect_rc WANT DESCRIPTION
  [[ "$rc" == "$1" ]] || fail "$2: exit code $rc, want $1"
}

expect_stdout() {  # expect_stdout EXPECTED_TEXT DESCRIPTION
  diff -u <(printf '%s' "$1") "$OUT" >"$TMP/diff" || {
    cat "$TMP/diff"
    fail "$2: stdout differs"
  }
}

expect_one_error_line() {  # expect_one_error_line PREFIX NEEDLE DESCRIPTION
  local lines
  lines=$(wc -l <"$ERR")
  [[ "$lines" == 1 ]] || fail "$3: $lines lines on stderr, want 1"
  [[ "$(head -c ${#1} "$ERR")" == "$1" ]] || fail "$3: stderr does not start with '$1'"
  grep -qF -- "$2" "$ERR" || fail "$3: stderr does not mention '$2'"
  [[ ! -s "$OUT" ]] || fail "$3: stdout not empty"
}

# --- wrong command lines and one-line errors ---------------------------------
run slices --bogus_flag=1 --shape=10,6 --placement='cpu:0-3' --nd_sbp='S(0)'
expect_rc 2 "unknown flag"
grep -qF "bogus_flag" "$ERR" || fail "unknown flag: stderr does not name it"

# Protobuf's JSON parser adds context lines; the tool keeps one line.
run slices --shape=10,6 --placement='cpu:0-3' --nd_sbp='{'
expect_rc 1 "truncated JSON"
expect_one_error_line "sbp slices:" "JSON" "truncated JSON"

# --- slices: golden output -------------------------------------------------
run slices --shape=10,6 --placement='cpu:0-3 [2,2]' --nd_sbp='(S(0),S(1))'
expect_rc 0 "slices golden"
expect_stdout "f32[10,6] (240 bytes) as (S(0), S(1)) on cpu:0-3 [2,2]
parallel_id rank  coord    slice                       elems      bytes
0           0     (0,0)    [0,5)x[0,3)                    15         60
1           1     (0,1)    [0,5)x[3,6)                    15         60
2           2     (1,0)    [5,10)x[0,3)                   15         60
3           3     (1,1)    [5,10)x[3,6)                   15         60
" "slices golden"
[[ ! -s "$ERR" ]] || fail "slices golden: stderr not empty"

# Flags may come before the command; JSON output uses proto field names.
run --format=json slices --shape=10,6 --placement='cpu:0-3 [2,2]' --nd_sbp='S(0),S(1)'
expect_rc 0 "slices json"
grep -qF '"rank_slice"' "$OUT" || fail "slices json: no rank_slice"
grep -qF '"split_parallel"' "$OUT" || fail "slices json: no split_parallel"

run slices --shape=3 --placement='cpu:0-3' --nd_sbp='S(0)' --dtype=i64
expect_rc 0 "slices empty"
grep -qF '[3,3)' "$OUT" || fail "slices empty: no empty range"
grep -qF '(empty)' "$OUT" || fail "slices empty: no (empty) marker"

# --- slices: bad input exits 1 with one line on stderr --------------------
run slices --shape=10,6 --placement='cpu:0-3 [2,2]' --nd_sbp='S(-1)'
expect_rc 1 "bad nd_sbp"
expect_one_error_line "sbp slices:" "S(-1)" "bad nd_sbp"

run slices --shape=10,6 --placement='cpu:3-1' --nd_sbp='S(0)'
expect_rc 1 "backwards range"
expect_one_error_line "sbp slices:" "3-1" "backwards range"

run slices --shape=10,6 --placement='cpu:0-3 [2,2]' --nd_sbp='(S(0))'
expect_rc 1 "nd_sbp length"
expect_one_error_line "sbp slices:" "(S(0))" "nd_sbp length"

run slices --placement='cpu:0-3' --nd_sbp='S(0)'
expect_rc 1 "missing shape"
expect_one_error_line "sbp slices:" "--shape" "missing shape"

run slices --shape=10,6 --placement='cpu:0-3' --nd_sbp='S(0)' extra
expect_rc 2 "extra argument"
expect_one_error_line "sbp slices:" "'extra'" "extra argument"

# --- parse -----------------------------------------------------------------
run parse '(S(0),B)' 'cuda:0-7 [2,4]'
expect_rc 0 "parse golden"
expect_stdout "nd_sbp:    (S(0), B)   (long form S(0),B, 2 mesh axes)
placement: cuda:0-7 [2,4]   (8 ranks, hierarchy [2,4])
" "parse golden"

run parse --nd_sbp='{"sbp_parallel":[{"broadcast_parallel":{}}]}' --format=textproto
expect_rc 0 "parse json input"
grep -qF 'nd_sbp_str: "(B)"' "$OUT" || fail "parse json input: no nd_sbp_str"

run parse --sbp=Q
expect_rc 1 "bad sbp"
expect_one_error_line "sbp parse:" "'Q'" "bad sbp"

run parse --placement='{"device_tag":"cpu","device_name":["1:0"]}'
expect_rc 1 "node 1"
expect_one_error_line "sbp parse:" "1:0" "node 1"

# --- plan --------------------------------------------------------------------
PROGRAM="tests/testdata/plan_mlp.json"
[[ -f "$PROGRAM" ]] || PROGRAM="$TEST_SRCDIR/${TEST_WORKSPACE:-__main__}/tests/testdata/plan_mlp.json"
run plan --program="$PROGRAM" --memory_cap=25000000
expect_rc 0 "plan"
grep -qF 'w1           f32[1024,4096]       (B, S(1))' "$OUT" || fail "plan: w1 not column-parallel"
grep -qF 'all_reduce[1] P->B' "$OUT" || fail "plan: no all-reduce of y"
grep -qF 'eager greedy' "$OUT" || fail "plan: no greedy totals"

run plan --program="$PROGRAM" --format=json --mesh=2,2
expect_rc 0 "plan json"
grep -qF '"greedy_total_time_s"' "$OUT" || fail "plan json: no greedy_total_time_s"
grep -qF '"nd_sbp_signature"' "$OUT" || fail "plan json: no nd_sbp_signature"

run plan --program="$PROGRAM" --format=dot
expect_rc 0 "plan dot"
grep -qF 'digraph program' "$OUT" || fail "plan dot: no digraph"

# A calibration file with nearly free compute: no collective is worth it.
printf 'compute_flops_per_s: 1e18\nmemory_bytes_per_s: 1e18\n' >"$TMP/fast.txtpb"
run plan --program="$PROGRAM" --calibration="$TMP/fast.txtpb"
expect_rc 0 "plan calibration"
grep -qF 'none: every read finds the layout it asks for' "$OUT" || fail "plan calibration: boxes"

printf 'compute_flops_per_s: 0\n' >"$TMP/bad.txtpb"
run plan --program="$PROGRAM" --calibration="$TMP/bad.txtpb"
expect_rc 1 "plan bad calibration"
expect_one_error_line "sbp plan:" "compute_flops_per_s" "plan bad calibration"

run plan --program=/nonexistent.json
expect_rc 1 "plan missing file"
expect_one_error_line "sbp plan:" "/nonexistent.json" "plan missing file"

run plan
expect_rc 1 "plan without program"
expect_one_error_line "sbp plan:" "--program" "plan without program"

# --- hostile input (issue 11): errors, not wrong answers --------------------
# Boxing byte sums beyond int64 were printed negative with exit 0.
run boxing --shape=9223372036854775807 --dtype=u8 --placement='cpu:0-3 [2,2]' \
  --from='(S(0),P)' --to='(B,B)'
expect_rc 1 "boxing byte overflow"
expect_one_error_line "sbp boxing:" "overflow int64" "boxing byte overflow"

# Two values of one kind: the first was silently dropped.
run parse 'S(0)' 'B'
expect_rc 1 "parse two nd_sbps"
expect_one_error_line "sbp parse:" "two nd_sbp values, 'S(0)' and 'B'" "parse two nd_sbps"

# An output constraint on an N-D mesh was ignored without a word.
run infer --op=relu --placement='cpu:0-3 [2,2]' --input='f32[8,8]:(S(0),B)' \
  --constraint=y_0='(P,P)'
expect_rc 1 "N-D output constraint"
expect_one_error_line "sbp infer:" "constrains inputs only" "N-D output constraint"
run infer --op=relu --placement='cpu:0-3 [2,2]' --input='f32[8,8]:(S(0),B)' \
  --constraint=y_0='(B,S(1))' --cost=planned
expect_rc 0 "N-D output constraint, planned"
grep -qF 'y_0' "$OUT" && grep -qF '(B, S(1))' "$OUT" || fail "planned: output constraint not applied"

run boxing --shape=8,6 --placement='cpu:0-3' --from='S(0)' --to=B extra
expect_rc 2 "boxing extra word"
expect_one_error_line "sbp boxing:" "'extra'" "boxing extra word"

run slices --shape=' ' --placement='cpu:0-3' --nd_sbp='B'
expect_rc 1 "blank shape"
expect_one_error_line "sbp slices:" "empty shape" "blank shape"

printf 'op_type_name: "relu" placement: "cpu:0-1" input { tensor: "f32[8]:S(0)" } partial_penalty_policy: 99\n' >"$TMP/penalty.txtpb"
run infer --request="$TMP/penalty.txtpb"
expect_rc 1 "partial_penalty_policy 99"
expect_one_error_line "sbp infer:" "partial_penalty_policy 99" "partial_penalty_policy 99"

run parse --nd_sbp='{"sbp_parallel":[{}]}'
expect_rc 1 "unset sbp_parallel"
expect_one_error_line "sbp parse:" "sets none of" "unset sbp_parallel"

# The command line: flag-library errors are ours, one line, exit 2.
run boxing --nproc=abc --shape=8 --placement=cpu:0-1 --from=B --to=B
expect_rc 2 "bad flag value"
expect_one_error_line "sbp boxing:" "bad value 'abc' for --nproc: expected an integer" "bad flag value"

run slices --explain=maybe
expect_rc 2 "bad bool value"
expect_one_error_line "sbp slices:" "--explain" "bad bool value"

printf 'secret-line-one\n--shape=8\n' >"$TMP/flags.txt"
run slices --flagfile="$TMP/flags.txt"
expect_rc 2 "flagfile"
expect_one_error_line "sbp slices:" "--flagfile is not supported" "flagfile"
grep -qF 'secret-line-one' "$ERR" && fail "flagfile: echoed the file"

run infer --request="$TMP/flags.txt"
expect_rc 1 "request of another format"
grep -qF 'secret-line-one' "$ERR" && fail "request: echoed the file"

run infer --request="$TMP"
expect_rc 1 "directory as request"
expect_one_error_line "sbp infer:" "is a directory" "directory as request"

# Misleading messages, now saying what is wrong.
run parse 'S(0)S(1)'
expect_rc 1 "missing comma"
expect_one_error_line "sbp parse:" "missing ',' after S(0)" "missing comma"

run parse --shape=99999999999999999999
expect_rc 1 "huge extent"
expect_one_error_line "sbp parse:" "too large" "huge extent"

run parse 'cpu:0-99999999999999'
expect_rc 1 "huge rank"
expect_one_error_line "sbp parse:" "too large" "huge rank"

run parse 'cpu:0-3 [2,2]x'
expect_rc 1 "trailing characters"
expect_one_error_line "sbp parse:" "trailing characters 'x'" "trailing characters"

HUGE=$(printf 'Q%.0s' $(seq 1 5000))
run parse --nd_sbp="$HUGE"
expect_rc 1 "huge bad input"
expect_one_error_line "sbp parse:" "(5000 characters)" "huge bad input"
[[ $(wc -c <"$ERR") -lt 400 ]] || fail "huge bad input: $(wc -c <"$ERR") bytes on stderr"

run parse 'cpu:0'
expect_rc 0 "one rank"
grep -qF '(1 rank, hierarchy [1])' "$OUT" || fail "one rank: not singular"

# --- commands and help -----------------------------------------------------
run bogus
expect_rc 2 "unknown command"
grep -qF "bogus" "$ERR" || fail "unknown command: stderr does not name it"

run help bogus
expect_rc 2 "help for unknown command"

run
expect_rc 2 "no command"

run help slices
expect_rc 0 "help slices"
grep -qF 'sbp slices --shape=SHAPE' "$OUT" || fail "help slices: no usage line"
grep -qF 'sbp parse [VALUE' "$OUT" && fail "help slices: shows parse help"

run slices --help
expect_rc 0 "slices --help"
grep -qF 'sbp slices --shape=SHAPE' "$OUT" || fail "slices --help: no usage line"

run help
expect_rc 0 "help"
grep -qF 'slices' "$OUT" || fail "help: no command list"
grep -qF 'plan' "$OUT" || fail "help: no plan command"

run help plan
expect_rc 0 "help plan"
grep -qF 'sbp plan --program=FILE.json' "$OUT" || fail "help plan: no usage line"

# sbp verify: one op passes (exit 0), bad flags are a wrong command line.
run verify --op=relu
expect_rc 0 "verify relu"
grep -qF 'relu: passed' "$OUT" || fail "verify relu: no passed line"
grep -qF '1 ops on [2] [3] [2,2] [2,3] [2,2,2]' "$OUT" || fail "verify relu: no summary"

run verify --op=relu --mesh=2,3 --format=json
expect_rc 0 "verify relu json"
grep -qF '"op": "relu", "outcome": "passed"' "$OUT" || fail "verify json: no relu entry"

run verify --op=no_such_op
expect_rc 1 "verify unknown op"
grep -qF "unknown op 'no_such_op'" "$ERR" || fail "verify unknown op: no message"

run verify --op=relu --mesh=2,0
expect_rc 1 "verify bad mesh"
grep -qF 'extent 0 is not positive' "$ERR" || fail "verify bad mesh: no message"

# launch: every line a rank prints carries its rank with --rank_prefix=yes,
# and a command `sbp` is this binary.
run launch --nproc=2 --rank_prefix=yes -- sbp parse 'Shard(0)'
expect_rc 0 "launch with rank prefixes"
[[ "$(grep -c '^\[rank [01]\] sbp:       S(0)$' "$OUT")" == 2 ]] ||
  fail "launch: each rank's output line should be prefixed [rank N]"
run launch --nproc=2 --rank_prefix=no -- sbp parse B
expect_rc 0 "launch without rank prefixes"
grep -q '^\[rank' "$OUT" && fail "launch --rank_prefix=no: output was prefixed"

# demo --format=json: one object with the run's summary.
run demo --steps=2 --format=json
expect_rc 0 "demo json"
grep -qF '"check": {"passed": true' "$OUT" || fail "demo json: no passing check"
grep -qF '"reference_losses": [' "$OUT" || fail "demo json: no reference losses"
grep -qF '"all_to_all": {"steps":' "$OUT" || fail "demo json: no collective totals"

# --version names the version and the build.
run --version
expect_rc 0 "version"
grep -q '^sbp (oneflow_sbp) [0-9]' "$OUT" || fail "version: no version line"
grep -qF 'cuda off' "$OUT" || fail "version: no build line"

run help verify
expect_rc 0 "help verify"
grep -qF 'sbp verify [--op=OP' "$OUT" || fail "help verify: no usage line"
grep -qF -- '--device=cuda checks the CUDA kernels' "$OUT" || fail "help verify: no --device"

# verify --device: a bad value is a failure (exit 1); cuda in the default
# build is a failure naming the build option (a --config=cuda build says
# "no CUDA device" without a GPU, and runs relu's CUDA kernel with one).
run verify --op=relu --device=tpu
expect_rc 1 "verify bad device"
grep -qF -- "--device='tpu': expected cpu or cuda" "$ERR" || fail "verify bad device: no message"
run verify --op=relu --mesh=2 --device=cuda
if grep -qF 'bazel build --config=cuda //cli:sbp' "$ERR"; then
  expect_rc 1 "verify cuda in the cpu build"
  [[ "$(grep -c 'no cuda device backend in this program' "$ERR")" == 1 ]] ||
    fail "verify cuda in the cpu build: not one backend error"
  [[ ! -s "$OUT" ]] || fail "verify cuda in the cpu build: a report anyway"
elif grep -qF 'no CUDA device' "$ERR"; then
  expect_rc 1 "verify cuda without a GPU"
else
  expect_rc 0 "verify cuda on a GPU"
  grep -qF 'relu: passed' "$OUT" || fail "verify cuda on a GPU: relu did not pass"
fi
run verify --op=relu --mesh=2 --device=cpu --format=json
expect_rc 0 "verify device cpu json"
grep -qF '"device": "cpu"' "$OUT" || fail "verify json: no device field"

if ((failures > 0)); then
  echo "$failures check(s) failed"
  exit 1
fi
echo "PASS"
