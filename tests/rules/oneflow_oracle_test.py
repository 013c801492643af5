"""`sbp infer --cost=oneflow` against real OneFlow 0.9.0's answers.

tests/testdata/oneflow_oracle_golden.txt is what OneFlow itself chose for
each call (tools/reference/oneflow_oracle.py made it, on 4 and 8 CPU
processes; its header lines name the version): op, placement, inputs,
attributes and OneFlow's output nd_sbp, tab-separated. Every call must give
OneFlow's output layout; a call OneFlow refused must fail here too.

Usage: oneflow_oracle_test.py SBP GOLDEN
"""
import json
import subprocess
import sys


def main(sbp, golden):
    cases, wrong = 0, []
    for line in open(golden, encoding="utf-8"):
        if line.startswith("#") or not line.strip():
            continue
        op, placement, inputs, attrs, want = line.rstrip("\n").split("\t")
        args = [sbp, "infer", "--op=" + op, "--placement=" + placement, "--cost=oneflow",
                "--format=json"] + ["--input=" + i for i in inputs.split(";")]
        args += ["--attr=" + a for a in attrs.split(";") if a]
        r = subprocess.run(args, capture_output=True, text=True)
        cases += 1
        if want.startswith("refused"):
            if r.returncode == 0:
                wrong.append((line.strip(), "OneFlow refused it; we answered"))
            continue
        if r.returncode != 0:
            wrong.append((line.strip(), "we refused: " + r.stderr.strip()[:200]))
            continue
        got = json.loads(r.stdout)["outputs"][0]["nd_sbp_str"].replace(" ", "")
        if got != want:
            wrong.append((line.strip(), "we chose " + got))
    for case, why in wrong[:40]:
        print("FAIL: %s\n      %s" % (case, why))
    if wrong:
        print("FAIL: %d of %d calls differ from OneFlow 0.9.0" % (len(wrong), cases))
        return 1
    print("PASS: %d calls give OneFlow 0.9.0's output layout" % cases)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1], sys.argv[2]))
