#!/usr/bin/env bash
# The `sbp` exit-code contract, for every command: 0 success, 1 a failure
# (bad input values, a failed run, a result mismatch), 2 a wrong command
# line (unknown command or flag, a flag or --format the command does not
# take, a flag value of the wrong type, extra words, and a value of launch's
# own flags it cannot use: `--nproc=0`, counts that disagree, no command after
# --). cli/command_table.h.
#
#   sbp_exit_codes_test.sh <path to sbp> <plan_mlp.json>
set -u

SBP="${1:?usage: $0 <path to sbp> <program.json>}"
PROGRAM="${2:?usage: $0 <path to sbp> <program.json>}"
[[ -x "$SBP" ]] || { echo "FAIL: sbp binary not found at $SBP"; exit 1; }

TMP="${TEST_TMPDIR:-$(mktemp -d)}"
failures=0

# expect WANT DESCRIPTION ARGS...: runs sbp (60 s at most) and checks the
# exit code; a failure (exit 1) or wrong command line (exit 2) must say why
# in one line that starts with "sbp".
expect() {
  local want="$1" what="$2"
  shift 2
  timeout 60 "$SBP" "$@" >"$TMP/out" 2>"$TMP/err" </dev/null
  local rc=$?
  if [[ "$rc" != "$want" ]]; then
    echo "FAIL: $what: exit $rc, want $want (sbp $*)"
    head -c 600 "$TMP/err"
    failures=$((failures + 1))
    return
  fi
  if [[ "$want" != 0 && "$what" != launch* && "$what" != "no command" ]]; then
    if [[ "$(wc -l <"$TMP/err")" != 1 || "$(head -c 3 "$TMP/err")" != "sbp" ]]; then
      echo "FAIL: $what: stderr is not one 'sbp ...' line:"
      head -c 600 "$TMP/err"
      failures=$((failures + 1))
    fi
  fi
}

MESH='cpu:0-3 [2,2]'

# Top level.
expect 2 "no command"
expect 2 "unknown command" frobnicate
expect 0 "help" help
expect 0 "help per command" help boxing
expect 2 "help for an unknown command" help frobnicate
expect 2 "unknown flag" parse B --frobnicate=1
expect 2 "flagfile" parse B --flagfile=/etc/passwd
expect 2 "flag missing its value" infer --op

# parse
expect 0 "parse" parse '(S(0),B)' 'cpu:0-3 [2,2]'
expect 1 "parse bad value" parse --sbp=Q
expect 1 "parse two values of one kind" parse B P
expect 2 "parse bad --format type" parse B --explain=perhaps

# slices
expect 0 "slices" slices --shape=10,6 --placement="$MESH" --nd_sbp='(S(0),S(1))'
expect 1 "slices bad layout" slices --shape=10,6 --placement="$MESH" --nd_sbp='S(-1)'
expect 2 "slices extra word" slices --shape=10,6 --placement="$MESH" --nd_sbp='(B,B)' extra

# infer
expect 0 "infer" infer --op=matmul --placement="$MESH" --input='f32[64,32]:(S(0),B)' \
  --input='f32[32,48]:(B,S(1))'
expect 1 "infer unknown op" infer --op=nope --placement="$MESH" --input='f32[8]:(B,B)'
expect 1 "infer missing request file" infer --request="$TMP/none.json"
expect 2 "infer extra word" infer --op=relu extra
expect 0 "infer einsum equation" infer --op=einsum --attr='equation=bmk,kn->bmn' \
  --placement="$MESH" --input='f32[8,6,4]:(S(0),B)' --input='f32[4,5]:(B,S(1))'
expect 1 "infer malformed einsum equation" infer --op=einsum --attr='equation=bmk,kn-bmn' \
  --placement="$MESH" --input='f32[8,6,4]:(S(0),B)' --input='f32[4,5]:(B,S(1))'

# boxing
expect 0 "boxing" boxing --shape=8,6 --placement="$MESH" --from='(S(0),S(1))' --to='(S(1),S(0))'
expect 0 "boxing executed" boxing --shape=8,6 --placement="$MESH" --from='(S(0),S(1))' \
  --to='(B,B)' --execute
expect 1 "boxing overflow" boxing --shape=9223372036854775807 --dtype=u8 --placement="$MESH" \
  --from='(S(0),P)' --to='(B,B)'
expect 2 "boxing bad --nproc" boxing --shape=8 --placement="$MESH" --from='(B,B)' --to='(B,B)' \
  --nproc=four
expect 2 "boxing extra word" boxing --shape=8 --placement="$MESH" --from='(B,B)' --to='(B,B)' x

# plan
expect 0 "plan" plan --program="$PROGRAM"
expect 1 "plan missing file" plan --program="$TMP/none.json"
expect 1 "plan directory" plan --program="$TMP"
expect 2 "plan extra word" plan --program="$PROGRAM" extra

# calibrate
expect 0 "calibrate" calibrate --nproc=2 --out="$TMP/calib.txtpb"
expect 1 "calibrate bad backend" calibrate --backend=carrier-pigeon
expect 2 "calibrate bad --nproc" calibrate --nproc=2x

# launch: the launched command's failure is a failure of launch.
expect 0 "launch" launch --nproc=2 -- /bin/true
expect 1 "launch failing rank" launch --nproc=2 -- /bin/false
expect 2 "launch bad --nproc" launch --nproc=many -- /bin/true
expect 1 "launch failing rank, prefixed" launch --nproc=2 --rank_prefix=yes -- /bin/false
expect 2 "launch no ranks" launch --nproc=0 -- /bin/true
expect 2 "launch negative ranks" launch --nproc_per_node=-2 -- /bin/true
expect 2 "launch disagreeing counts" launch --nproc=2 --nproc_per_node=3 -- /bin/true
expect 0 "launch torchrun's name" launch --nproc_per_node=2 -- /bin/true
expect 0 "launch sbp itself" launch --nproc=1 -- sbp parse B
expect 2 "launch bad --rank_prefix" launch --nproc=1 --rank_prefix=maybe -- /bin/true

# demo
expect 0 "demo" demo --steps=2
expect 1 "demo bad mesh" demo --mesh=0,2
expect 2 "demo bad --steps" demo --steps=three

# tour (takes no input, so it has no failure case)
expect 0 "tour" tour
expect 2 "tour extra word" tour extra

# ops
expect 0 "ops" ops
expect 0 "ops one" ops matmul
expect 1 "ops unknown" ops nope
expect 2 "ops two names" ops matmul relu

# verify (--device=cuda depends on the build and the machine: see
# sbp_tool_e2e_test)
expect 0 "verify" verify --op=relu --mesh=2
expect 1 "verify unknown op" verify --op=nope
expect 1 "verify bad device" verify --op=relu --device=tpu
expect 2 "verify flag of demo" verify --op=relu --steps=2

# Flags of other commands are a wrong command line, never ignored.
expect 2 "plan takes no --backend" plan --program="$PROGRAM" --backend=gloo --execute
expect 2 "plan takes no --trace" plan --program="$PROGRAM" --trace="$TMP/t.json"
expect 2 "boxing takes no --mesh" boxing --shape=8 --placement="$MESH" --from='(B,B)' --to='(B,B)' \
  --mesh=2,2
expect 2 "parse takes no --op" parse B --op=relu
expect 2 "infer takes no --device" infer --op=relu --placement="$MESH" --input='f32[8]:(B,B)' \
  --device=cuda
expect 2 "launch takes no --format" launch --nproc=1 --format=json -- /bin/true
expect 2 "tour takes no --format" tour --format=json
# --format only where the output exists, and only the forms it has.
expect 2 "demo has no dot" demo --format=dot
expect 2 "verify has no textproto" verify --op=relu --format=textproto
expect 2 "ops has no dot" ops --format=dot
expect 0 "demo json" demo --steps=2 --format=json
expect 0 "version" --version

if ((failures > 0)); then
  echo "$failures check(s) failed"
  exit 1
fi
echo "PASS"
