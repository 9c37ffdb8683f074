"""t.transpose(...).contiguous().view(...)."""
import numpy as np
import torch
from torch import nn


class Example(nn.Module):
    def __init__(self):
        super().__init__()
        self.layer = nn.Linear(12, 3)

    def forward(self, x):
        return self.layer(x.transpose(1, 2).contiguous().view(2, -1))


INPUTS = [np.linspace(-1.0, 1.0, 2 * 3 * 4, dtype=np.float32).reshape(2, 3, 4)]
