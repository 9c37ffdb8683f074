"""torch.stack along dim 1 and along the default dim 0 (the same shape, different values)."""
import numpy as np
import torch
from torch import nn


class Example(nn.Module):
    def __init__(self):
        super().__init__()
        self.layer = nn.Linear(3, 3)

    def forward(self, x):
        h = self.layer(x)
        return torch.stack([h, x], 1) + torch.stack((h, 2 * x))


INPUTS = [np.linspace(-1.0, 1.0, 2 * 3, dtype=np.float32).reshape(2, 3)]
