#!/usr/bin/env bash
# Peak memory of `sbp boxing --execute` (issue 24): for every pair over
# {S(0), S(1), B, P} on cpu:0-3, and pairs on the [2,2] mesh, the peak RSS
# of the sbp process may grow over that of a tiny run by at most what the
# two layouts hold themselves (the source shards of every rank plus the
# destination shards of every rank: 4 copies for B or P on 4 ranks) plus
# 2x the tensor for the steps and the check. Before the fix a P source made
# the full tensor on every rank, rank 0 held every shard, the assembled
# tensor and a full reference, and the executor packed whole tensors:
# S(0) -> S(1) grew by 4.9x the tensor (bound 4x), P -> S(0) by 10.7x
# (bound 7x). Each run is a fresh process, so its peak is its own (the
# kernel's ru_maxrss of the child, read with os.wait4).
#
# Sanitizers keep freed memory in quarantine, so under --config=asan/tsan
# this only checks that every run is bit-exact and moved the planned bytes.
#
#   sbp_boxing_memory_test.sh <path to sbp>
set -u
if (($# != 1)) || [[ ! -x "$1" ]]; then
  echo "FAIL: usage: $0 <path to an executable sbp> (got: $*)"
  exit 1
fi
# Sanitizers keep freed memory in quarantine: check results only.
if grep -aqE '__asan_init|__tsan_init' "$1"; then export OFS_SANITIZED=1; fi
exec python3 - "$1" <<'PY'
import os, subprocess, sys

SBP = sys.argv[1]
ROWS, COLS = 2048, 4096          # f32: 32 MiB
T = ROWS * COLS * 4
MiB = 1 << 20

def peak(args):
    pid = os.fork()
    if pid == 0:
        fd = os.open(os.devnull, os.O_WRONLY)
        os.dup2(fd, 2)
        out = os.open(args[0], os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o644)
        os.dup2(out, 1)
        try:
            os.execv(SBP, [SBP] + args[1:])
        finally:
            os._exit(127)
    _, status, usage = os.wait4(pid, 0)
    with open(args[0]) as f:
        text = f.read()
    return os.waitstatus_to_exitcode(status), usage.ru_maxrss * 1024, text

sanitized = bool(os.environ.get("OFS_SANITIZED"))
tmp = os.environ.get("TEST_TMPDIR", "/tmp")
report = os.path.join(tmp, "boxing_report.txt")

def held(nd):
    # Bytes all 4 ranks hold of a layout on [4] or [2,2]: a B or P axis of
    # extent h multiplies the tensor by h.
    parts = [p.strip() for p in nd.strip("()").split(",")]
    mesh = [4] if len(parts) == 1 else [2, 2]
    total = T
    for p, h in zip(parts, mesh):
        if p in ("B", "P"):
            total *= h
    return total

code, base, text = peak([report, "boxing", "--execute", "--shape=8,8", "--placement=cpu:0-3",
                         "--from=S(0)", "--to=S(1)"])
if code != 0:
    print("FAIL: tiny run exited", code, text)
    sys.exit(1)

cases = []
one = ["S(0)", "S(1)", "B", "P"]
for a in one:
    for b in one:
        cases.append(("cpu:0-3", a, b))
for a, b in [("(S(0),S(1))", "(B,B)"), ("(S(0),S(1))", "(S(1),S(0))"),
             ("(P,P)", "(S(0),S(1))"), ("(P,S(0))", "(B,S(1))"),
             ("(S(0),P)", "(S(1),B)"), ("(P,P)", "(B,B)")]:
    cases.append(("cpu:0-3 [2,2]", a, b))

failures = 0
for placement, a, b in cases:
    code, rss, text = peak([report, "boxing", "--execute", f"--shape={ROWS},{COLS}", "--dtype=f32",
                            f"--placement={placement}", f"--from={a}", f"--to={b}"])
    grown = rss - base
    bound = held(a) + held(b) + 2 * T
    ok = code == 0 and "result bit-exact" in text and \
        "every rank moved exactly the planned bytes" in text
    line = (f"{placement} {a} -> {b}: peak RSS grew {grown / MiB:.1f} MiB = {grown / T:.2f}x "
            f"the tensor (bound {bound / MiB:.0f} MiB = {bound / T:.0f}x)")
    if not ok:
        print("FAIL:", line, "exit", code, "\n", text)
        failures += 1
    elif not sanitized and grown > bound:
        print("FAIL:", line)
        failures += 1
    else:
        print("ok:", line)
print(f"baseline (tiny run) peak RSS {base / MiB:.1f} MiB")
sys.exit(1 if failures else 0)
PY
