"""t.lerp with a float weight, a tensor weight (broadcast), a weight past 1, and by keyword."""
import numpy as np
import torch
from torch import nn


class Example(nn.Module):
    def __init__(self):
        super().__init__()
        self.layer = nn.Linear(4, 4)
        self.gate = nn.Linear(4, 1)

    def forward(self, x):
        h = self.layer(x)
        w = torch.sigmoid(self.gate(x))
        return h.lerp(x, 0.3), x.lerp(h, w), h.lerp(x[0], 1.5), x.lerp(end=h, weight=0.75)


INPUTS = [np.linspace(-1.0, 1.0, 2 * 3 * 4, dtype=np.float32).reshape(2, 3, 4)]
