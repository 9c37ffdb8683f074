"""t.ndim, as a number and in a condition."""
import numpy as np
import torch
from torch import nn


class Example(nn.Module):
    def __init__(self):
        super().__init__()
        self.layer = nn.Linear(4, 3)

    def forward(self, x):
        h = self.layer(x)
        if h.ndim == 3:
            h = h.sum(1)
        return h * x.ndim


INPUTS = [np.linspace(-1.0, 1.0, 2 * 3 * 4, dtype=np.float32).reshape(2, 3, 4)]
