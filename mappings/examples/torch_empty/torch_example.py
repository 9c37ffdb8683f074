"""torch.empty: only its shape and dtype are read (its values are undefined in torch)."""
import numpy as np
import torch
from torch import nn


class Example(nn.Module):
    def __init__(self):
        super().__init__()
        self.layer = nn.Linear(4, 3)

    def forward(self, x):
        h = self.layer(x)
        buffer = torch.empty(2, 5, dtype=torch.float32)
        return h * buffer.shape[1]


INPUTS = [np.linspace(-1.0, 1.0, 2 * 4, dtype=np.float32).reshape(2, 4)]
