#!/usr/bin/env bash
# Every `$ sbp ...` command in README.md runs as the README shows it
# (tests/cli/readme_commands.py).
set -euo pipefail
exec python3 tests/cli/readme_commands.py README.md "$1"
