"""The kink reproducer that tests/test_kink_replay.py and bench/kink_bench.py share (as compat/training_cases.py is
shared by the training test and bench)."""
from __future__ import annotations

import numpy as np


def edge_input(ulps: int) -> np.ndarray:
    """A 4x4x8x8 batch whose element (0, 0, 3, 3) sits ``ulps`` float32 ulps from its channel's batch mean: through
    a BatchNorm2d in training mode its normalised value is 0 in exact arithmetic, and each float32 run rounds it to
    one side or the other of a following ReLU."""
    x = np.random.default_rng(0).standard_normal((4, 4, 8, 8)).astype(np.float32)
    others = np.delete(x[:, 0].astype(np.float64).ravel(), 3 * 8 + 3)
    mean = np.float32(others.sum() / others.size)
    x[0, 0, 3, 3] = mean + ulps * np.spacing(mean)
    return x
