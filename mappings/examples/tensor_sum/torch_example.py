"""t.sum over one axis with keepdim (positional and keyword) and over all elements."""
import numpy as np
import torch
from torch import nn


class Example(nn.Module):
    def __init__(self):
        super().__init__()
        self.layer = nn.Linear(4, 4)

    def forward(self, x):
        h = self.layer(x)
        return h.sum(1, True) + h.sum() + h.sum(dim=-1, keepdim=True) + h.sum((0, 1))


INPUTS = [np.linspace(-1.0, 1.0, 2 * 3 * 4, dtype=np.float32).reshape(2, 3, 4)]
