"""The README's Python tour runs as shown (doctest of its >>> blocks), in a
fresh interpreter and without ofs.init(), exactly as a user pastes it: the
first call starts the session and the [2,2] placement grows the world."""
import re
import subprocess
import sys

from build_paths import child_env, readme

RUN_TOUR = r'''
import doctest, re, sys
text = open(sys.argv[1], encoding="utf-8").read()
blocks = [b for b in re.findall(r"```python\n(.*?)```", text, re.S) if ">>>" in b]
assert blocks, "README has no Python tour"
parser = doctest.DocTestParser()
runner = doctest.DocTestRunner(optionflags=doctest.ELLIPSIS)
globs = {}  # one namespace: later blocks use what earlier ones made
for i, block in enumerate(blocks):
    runner.run(parser.get_doctest(block, globs, f"README.md python block {i}", sys.argv[1], 0))
result = runner.summarize(verbose=False)
import oneflow_sbp as ofs
print(f"attempted {result.attempted} failed {result.failed} world {ofs.world_size()}")
'''


def test_readme_python_tour():
    r = subprocess.run([sys.executable, "-c", RUN_TOUR, readme()], capture_output=True, text=True,
                       env=child_env(), timeout=120)
    assert r.returncode == 0, r.stdout + r.stderr
    summary = re.search(r"attempted (\d+) failed (\d+) world (\d+)", r.stdout)
    assert summary, r.stdout + r.stderr
    attempted, failed, world = map(int, summary.groups())
    assert failed == 0, f"{failed} README example(s) differ:\n{r.stdout}"
    assert attempted >= 15
    assert world == 4  # grown on demand from the one rank a first use starts
