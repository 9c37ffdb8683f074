"""torch.flatten(x, 1) and torch.flatten(x): torch's start_dim defaults to 0, ops.flatten's to 1."""
import numpy as np
import torch
from torch import nn


class Example(nn.Module):
    def __init__(self):
        super().__init__()
        self.layer = nn.Linear(12, 3)
        self.head = nn.Linear(24, 3)

    def forward(self, x):
        a = self.layer(torch.flatten(x, 1))
        b = self.head(torch.flatten(x))
        return a + b + torch.flatten(x, 0, 1)[:2, :3]


INPUTS = [np.linspace(-1.0, 1.0, 2 * 3 * 4, dtype=np.float32).reshape(2, 3, 4)]
