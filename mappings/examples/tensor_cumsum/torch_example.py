"""t.cumsum along a positive and a negative axis, by keyword, and with dtype=."""
import numpy as np
import torch
from torch import nn


class Example(nn.Module):
    def __init__(self):
        super().__init__()
        self.layer = nn.Linear(4, 4)

    def forward(self, x):
        h = self.layer(x)
        return h.cumsum(1), h.cumsum(dim=-1), h.cumsum(-1, dtype=torch.float64)


INPUTS = [np.linspace(-1.0, 1.0, 2 * 3 * 4, dtype=np.float32).reshape(2, 3, 4)]
