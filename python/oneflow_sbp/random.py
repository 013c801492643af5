"""Seeded values identical to the engine's SeededStream (the demo's weights)."""

from . import _C

__all__ = ["seeded_uniform", "seeded_ints"]


def seeded_uniform(seed, name, n):
    """n values uniform in [-1, 1) from the stream (seed, name), as float64."""
    return _C.seeded_uniform(int(seed), str(name), int(n))


def seeded_ints(seed, name, n, bound):
    """n ints in [0, bound) from the stream (seed, name)."""
    return _C.seeded_ints(int(seed), str(name), int(n), int(bound))
