"""The README's Python tour runs as shown (doctest of its >>> blocks)."""
import doctest
import os
import re

import oneflow_sbp as ofs
from build_paths import readme


def test_readme_python_tour():
    text = open(readme(), encoding="utf-8").read()
    blocks = [b for b in re.findall(r"```python\n(.*?)```", text, re.S) if ">>>" in b]
    assert blocks, "README has no Python tour"
    ofs.init(world_size=4)
    try:
        parser = doctest.DocTestParser()
        runner = doctest.DocTestRunner(optionflags=doctest.ELLIPSIS)
        for i, block in enumerate(blocks):
            test = parser.get_doctest(block, {}, f"README.md python block {i}", readme(), 0)
            runner.run(test)
        result = runner.summarize(verbose=False)
        assert result.failed == 0, f"{result.failed} README example(s) differ (see the output above)"
        assert result.attempted >= 15
    finally:
        ofs.shutdown()
