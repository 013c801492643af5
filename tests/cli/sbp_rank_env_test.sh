#!/usr/bin/env bash
# Commands that run ranks and the environment (issue 24):
#   - a stray RANK (with WORLD_SIZE, MASTER_ADDR, MASTER_PORT) in the
#     user's shell does not make a single command wait for peers: only a
#     process that also has the launcher's OFS_JOB_SECRET is a rank;
#   - --timeout / OFS_TIMEOUT and --heartbeat_timeout are checked and
#     honoured, and `sbp launch` hands its ranks the job secret and the
#     timeouts through the environment, never the command line.
#
#   sbp_rank_env_test.sh <path to sbp>
set -u

SBP="${1:?usage: $0 <path to sbp>}"
[[ -x "$SBP" ]] || { echo "FAIL: sbp binary not found at $SBP"; exit 1; }
TMP="${TEST_TMPDIR:-$(mktemp -d)}"
failures=0
fail() {
  echo "FAIL: $*"
  failures=$((failures + 1))
}

BOXING=(boxing --execute=gloo --shape=8,6 "--placement=cpu:0-1 [2]" "--from=(S(0))" "--to=(B)")
# A port nobody listens on: a process that took itself for rank 1 would
# wait there for rank 0's store until its timeout.
PORT=$(python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])')
unset OFS_JOB_SECRET OFS_TIMEOUT OFS_HEARTBEAT_TIMEOUT

start=$SECONDS
RANK=1 WORLD_SIZE=2 MASTER_ADDR=127.0.0.1 MASTER_PORT=$PORT timeout 50 "$SBP" "${BOXING[@]}" \
  >"$TMP/out" 2>&1 </dev/null
rc=$?
[[ $rc == 0 ]] || { fail "boxing --execute=gloo with a stray RANK=1: exit $rc"; head -c 600 "$TMP/out"; }
(( SECONDS - start < 20 )) || fail "boxing with a stray RANK took $((SECONDS - start)) s"
grep -q "bit-exact" "$TMP/out" || fail "boxing with a stray RANK did not run: $(head -c 300 "$TMP/out")"

RANK=1 WORLD_SIZE=2 MASTER_ADDR=127.0.0.1 MASTER_PORT=$PORT timeout 50 "$SBP" demo --steps=2 \
  --mesh=2 --backend=gloo >"$TMP/out" 2>&1 </dev/null
rc=$?
[[ $rc == 0 ]] || { fail "demo --backend=gloo with a stray RANK=1: exit $rc"; head -c 600 "$TMP/out"; }

# Flags and variables are checked.
timeout 20 "$SBP" "${BOXING[@]}" --timeout=0 >"$TMP/out" 2>&1
[[ $? == 2 ]] || fail "--timeout=0 is not a usage error: $(head -c 300 "$TMP/out")"
timeout 20 "$SBP" "${BOXING[@]}" --heartbeat_timeout=-1 >"$TMP/out" 2>&1
[[ $? == 2 ]] || fail "--heartbeat_timeout=-1 is not a usage error"
OFS_TIMEOUT=soon timeout 20 "$SBP" "${BOXING[@]}" >"$TMP/out" 2>&1
rc=$?
[[ $rc == 1 ]] && grep -q "OFS_TIMEOUT='soon'" "$TMP/out" ||
  fail "OFS_TIMEOUT=soon: exit $rc: $(head -c 300 "$TMP/out")"

# sbp launch: the ranks see the timeouts and a 64-digit secret in their
# environment; the secret is on no command line.
timeout 30 "$SBP" launch --nproc=2 --timeout=7 --heartbeat_timeout=3 --rank_prefix=yes -- \
  sh -c 'echo "$RANK $OFS_TIMEOUT $OFS_HEARTBEAT_TIMEOUT ${#OFS_JOB_SECRET}"; cat /proc/$$/cmdline | tr "\0" " "; echo' \
  >"$TMP/out" 2>&1
rc=$?
[[ $rc == 0 ]] || fail "launch --timeout: exit $rc: $(head -c 300 "$TMP/out")"
grep -qF "[rank 0] 0 7 3 64" "$TMP/out" && grep -qF "[rank 1] 1 7 3 64" "$TMP/out" ||
  fail "launch did not hand OFS_TIMEOUT/OFS_HEARTBEAT_TIMEOUT/OFS_JOB_SECRET: $(cat "$TMP/out")"
secret_shown=$(grep -cE "[0-9a-f]{64}" "$TMP/out")
[[ $secret_shown == 0 ]] || fail "the job secret appears on a command line"

# A second launch on a port that is taken fails at once, naming it.
python3 -c 'import socket, time, sys
s = socket.socket(); s.bind(("127.0.0.1", 0)); s.listen(1)
print(s.getsockname()[1]); sys.stdout.flush(); time.sleep(20)' >"$TMP/port" &
holder=$!
for _ in $(seq 50); do [[ -s "$TMP/port" ]] && break; sleep 0.1; done
start=$SECONDS
timeout 20 "$SBP" launch --nproc=2 --master_port="$(cat "$TMP/port")" -- true >"$TMP/out" 2>&1
rc=$?
kill "$holder" 2>/dev/null
[[ $rc == 1 ]] && grep -q "is not free" "$TMP/out" ||
  fail "launch on a taken port: exit $rc: $(head -c 300 "$TMP/out")"
(( SECONDS - start < 5 )) || fail "launch on a taken port took $((SECONDS - start)) s"

if (( failures > 0 )); then
  echo "$failures failure(s)"
  exit 1
fi
echo "PASS"
