"""Tensor.clamp with both bounds (two inputs sit exactly on them), with min only, and with max only by keyword."""
import numpy as np
from torch import nn


class Example(nn.Module):
    def __init__(self):
        super().__init__()
        self.fc = nn.Linear(4, 3)

    def forward(self, x):
        h = self.fc(x)
        return x.clamp(-0.25, 0.5), h.clamp(min=0.1), h.clamp(max=-0.2)


INPUTS = [np.array([[-1.0, -0.25, 0.1, 0.5], [0.75, -0.6, 0.3, 2.0]], dtype=np.float32)]
