"""Shared fixtures: a fresh embedded session per test module."""
import pytest

import oneflow_sbp as ofs


@pytest.fixture()
def session():
    s = ofs.init(world_size=4, timeout=20.0)
    yield s
    ofs.shutdown()


@pytest.fixture()
def mesh22():
    return ofs.placement("cpu", ranks=[[0, 1], [2, 3]])
