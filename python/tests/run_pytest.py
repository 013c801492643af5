"""Runs the package's pytest suite against the module built by Bazel.

The runfiles tree holds python/oneflow_sbp/ (sources and _C.so side by
side), so putting python/ first on sys.path imports the built package.
"""
import os
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.dirname(HERE))

import pytest  # noqa: E402

args = ["-q", "-p", "no:cacheprovider", HERE]
if os.environ.get("XML_OUTPUT_FILE"):
    args.append("--junitxml=" + os.environ["XML_OUTPUT_FILE"])
sys.exit(pytest.main(args))
