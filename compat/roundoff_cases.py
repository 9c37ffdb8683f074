"""The cancellation reproducer that tests/test_roundoff.py and bench/verdict_bench.py share (as compat/kink_cases.py
is shared by the kink tests and bench): an attention gate as MONAI's AttentionUnet has it. Its 1-channel conv feeds
a BatchNorm, so the conv's bias gradient is 0 in exact arithmetic and each float32 run keeps about one ulp of the
terms that cancelled; the BatchNorm's own weight gradient is a sum whose terms cancel in part."""
from __future__ import annotations

import numpy as np

GATE_INPUT = (2, 8, 8, 8)     # batch 2, 8 channels, 8x8: AttentionUnet's deeper gates at a small 2-D configuration


def gate_input(seed: int) -> np.ndarray:
    return np.random.default_rng(seed).standard_normal(GATE_INPUT).astype(np.float32)


def torch_gate(channels: int = GATE_INPUT[1]):
    """x * sigmoid(BatchNorm(conv1x1(ReLU(BatchNorm(conv3x3(x)))))), in training mode."""
    from torch import nn

    class Gate(nn.Module):
        def __init__(self):
            super().__init__()
            self.theta = nn.Sequential(nn.Conv2d(channels, channels, 3, padding=1), nn.BatchNorm2d(channels), nn.ReLU())
            self.psi = nn.Sequential(nn.Conv2d(channels, 1, 1), nn.BatchNorm2d(1), nn.Sigmoid())

        def forward(self, x):
            return x * self.psi(self.theta(x))
    return Gate().train()


def ms_gate(channels: int = GATE_INPUT[1], bn_eps: float = 1e-5):
    """torch_gate's twin; ``bn_eps`` other than 1e-5 plants a bug in the gate's BatchNorm."""
    from mindspore import nn

    from .zoo.layers import ms_bn, ms_conv

    class Gate(nn.Cell):
        def __init__(self):
            super().__init__()
            self.theta = nn.SequentialCell([ms_conv(channels, channels, 3, padding=1), ms_bn(channels), nn.ReLU()])
            self.psi = nn.SequentialCell([ms_conv(channels, 1, 1), nn.BatchNorm2d(1, eps=bn_eps, momentum=0.9),
                                          nn.Sigmoid()])

        def construct(self, x):
            return x * self.psi(self.theta(x))
    gate = Gate()
    gate.set_train(True)
    return gate
