"""`sbp infer --cost=oneflow` against real OneFlow 0.9.0's answers.

tests/testdata/oneflow_oracle_golden.txt is what OneFlow itself chose for
each call (tools/reference/run_oneflow_oracle.sh made it, on 2 to 8 CPU
processes; its header line names the version): op, placement, inputs,
attributes and OneFlow's answer, tab-separated. Every call OneFlow answered
must give OneFlow's output layout. A call OneFlow refused must fail here
too, unless OneFlow's reason is outside inference (no CPU kernel); those,
the calls whose inputs OneFlow cannot make (a dim split into more parts
than it has; we allow empty shards), the calls whose processes aborted and
the ones OneFlow's Python API would dispatch to another op are listed with
their reasons and not compared.

Usage: oneflow_oracle_test.py SBP GOLDEN
"""
import collections
import json
import re
import subprocess
import sys

# OneFlow refusals that are not inference's: we answer these.
NOT_INFERENCE = [
    ("no CPU kernel in OneFlow", re.compile(r"Cannot find the kernel")),
]


def reason_class(answer):
    kind, _, why = answer.partition(": ")
    if kind == "refused":
        for name, pattern in NOT_INFERENCE:
            if pattern.search(why):
                return "refused (" + name + ")"
        return None
    if kind == "aborted":
        return "aborted (" + (why.split("Check failed:")[-1].strip()[:60] or why[:60]) + ")"
    if kind == "unmade":
        return "unmade (OneFlow cannot split a dim into more parts than it has)"
    if kind == "skipped":
        return "skipped (" + why[:70] + ")"
    return None


def main(sbp, golden):
    cases, wrong, listed = 0, [], collections.Counter()
    header = ""
    for line in open(golden, encoding="utf-8"):
        if line.startswith("#"):
            header = header or line.strip("# \n")
            continue
        if not line.strip():
            continue
        op, placement, inputs, attrs, want = line.rstrip("\n").split("\t")
        uncompared = reason_class(want)
        if uncompared:
            listed["%s: %s" % (op, uncompared)] += 1
            continue
        args = [sbp, "infer", "--op=" + op, "--placement=" + placement, "--cost=oneflow",
                "--format=json"] + ["--input=" + i for i in inputs.split(";")]
        args += ["--attr=" + a for a in attrs.split(";") if a]
        r = subprocess.run(args, capture_output=True, text=True)
        cases += 1
        if want.startswith("refused"):
            if r.returncode == 0:
                wrong.append((line.strip()[:300], "OneFlow refused it; we answered"))
            continue
        if r.returncode != 0:
            wrong.append((line.strip(), "we refused: " + r.stderr.strip()[:200]))
            continue
        got = json.loads(r.stdout)["outputs"][0]["nd_sbp_str"].replace(" ", "")
        if got != want:
            wrong.append((line.strip(), "we chose " + got))
    print("golden: " + header)
    for why, n in sorted(listed.items()):
        print("not compared: %4d  %s" % (n, why))
    for case, why in wrong[:40]:
        print("FAIL: %s\n      %s" % (case, why))
    if wrong:
        print("FAIL: %d of %d calls differ from OneFlow 0.9.0" % (len(wrong), cases))
        return 1
    print("PASS: %d calls give OneFlow 0.9.0's answer (%d not compared, listed above)" %
          (cases, sum(listed.values())))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1], sys.argv[2]))
