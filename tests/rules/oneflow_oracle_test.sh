#!/usr/bin/env bash
# Runs oneflow_oracle_test.py: `sbp infer --cost=oneflow` against real
# OneFlow 0.9.0's recorded answers.
#
#   oneflow_oracle_test.sh <sbp> <oneflow_oracle_test.py> <golden>
set -u
exec python3 "$2" "$1" "$3"
