#!/usr/bin/env bash
# Every C++ example in README.md, docs/*.md and the headers that show one
# is the text of a program in docs/examples (examples_in_sync.py), and the
# checker itself reports a drifted, an unmarked and an unknown example.
set -euo pipefail
files=(README.md docs/*.md engine/engine.h)
exec python3 docs/examples/examples_in_sync.py . --self-test "${files[@]}"
