"""The Python LLaMA block trains with the same losses as `sbp demo`."""
import json
import os
import subprocess
import sys

import numpy as np

import oneflow_sbp as ofs

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(os.path.dirname(HERE), "examples"))

import llama_block  # noqa: E402
from build_paths import sbp_binary  # noqa: E402


def test_seeded_streams_are_the_engines():
    u = ofs.random.seeded_uniform(1, "embedding", 1000)
    assert u.dtype == np.float64 and len(set(u.tolist())) == 1000
    assert (u >= -1).all() and (u < 1).all()
    ints = ofs.random.seeded_ints(1, "batch", 100, 128)
    assert ints.dtype == np.int64 and 1 < len(set(ints.tolist())) and ints.max() < 128
    np.testing.assert_array_equal(ofs.random.seeded_uniform(1, "embedding", 10), u[:10])


def test_three_steps_on_2x2_match_sbp_demo(session):
    losses = llama_block.train(mesh=(2, 2), steps=3, seed=1)
    out = subprocess.run([sbp_binary(), "demo", "--mesh=2,2", "--steps=3", "--format=json"],
                         check=True, capture_output=True, text=True, timeout=300)
    demo = json.loads(out.stdout)["losses"]
    assert len(losses) == 3 and losses[2] < losses[0]
    # Same ops, same layouts, same kernels, same order: the same floats.
    np.testing.assert_allclose(losses, demo, rtol=1e-6, atol=0)
