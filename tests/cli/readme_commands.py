"""Every `$ sbp ...` command in README.md runs as the README shows it.

For each fenced block, each command (a line starting with "$ ", with "\\"
continuations) is run with bash from the workspace root, `sbp` being the
built tool. Its exit status must be the one shown (`$ echo $?` after it),
else 1 when the shown output is an "sbp <command>: ..." error line, else 0.
The shown output lines must appear in the real output in order; "..."
lines stand for any lines, a line starting with "..." matches the end of a
line, one ending with "(...)" its start, and timings, ports, measured
rates and numbers in e-notation (rounding differences) match any value.

Usage: readme_commands.py README.md SBP
"""
import os
import re
import subprocess
import sys
import tempfile

TIMING = re.compile(r"\d+(\.\d+)?e[-+]\d+|\d+(\.\d+)?(?= ?(ms|us|s|GB/s|MB/s|B/s)\b)|"
                    r"(?<=MASTER_PORT )\d+")


def normal(line):
    return TIMING.sub("<n>", line.rstrip())


def entries(readme):
    """(command, shown output lines, shown exit status or None) per command."""
    out = []
    in_block = False
    current = None
    lines = open(readme, encoding="utf-8").read().split("\n")
    i = 0
    while i < len(lines):
        line = lines[i]
        if line.startswith("```"):
            in_block = not in_block
            current = None
        elif in_block and line.startswith("$ "):
            cmd = line[2:]
            while cmd.endswith("\\") and i + 1 < len(lines):
                i += 1
                cmd = cmd[:-1] + " " + lines[i].strip()
            if cmd.strip() == "echo $?":
                if current is not None:
                    current[2] = int(lines[i + 1].strip())
                    i += 1
            else:
                current = [cmd, [], None]
                out.append(current)
        elif in_block and current is not None:
            current[1].append(line)
        i += 1
    return [(c, [l for l in o if l.strip()], rc) for c, o, rc in out if c.split()[0] == "sbp"]


def matches(shown, got):
    j = 0
    for s in shown:
        s = normal(s)
        if s.strip() == "...":
            continue
        while j < len(got):
            g = normal(got[j])
            j += 1
            if s.startswith("...") and g.endswith(s[3:].lstrip()):
                break
            if s.endswith("(...)") and g.startswith(s[:-5].rstrip()):
                break
            if g == s:
                break
        else:
            return f"shown line not found in order: {s!r}"
    return None


def main(readme, sbp):
    bindir = tempfile.mkdtemp()
    os.symlink(os.path.abspath(sbp), os.path.join(bindir, "sbp"))
    env = dict(os.environ, PATH=bindir + ":" + os.environ.get("PATH", ""))
    failures = 0
    runs = entries(readme)
    for cmd, shown, rc in runs:
        if "--device=cuda" in cmd and rc is None:
            continue  # needs a GPU
        want = rc if rc is not None else (1 if shown and re.match(r"sbp \w+: ", shown[0]) else 0)
        p = subprocess.run(["bash", "-c", cmd], capture_output=True, text=True, env=env,
                           timeout=300)
        got = (p.stdout + p.stderr).split("\n")
        why = None
        if p.returncode != want:
            why = f"exit {p.returncode}, README shows {want}"
        else:
            why = matches(shown, got)
        if why:
            failures += 1
            print(f"FAIL: $ {cmd}\n  {why}\n  output:\n    " + "\n    ".join(got[:40]))
    print(f"{len(runs)} README commands, {failures} failed")
    return 1 if failures or not runs else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1], sys.argv[2]))
