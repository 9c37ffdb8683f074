"""torch.tensor from Python floats (float32), ints (int64) and a scalar."""
import numpy as np
import torch
from torch import nn


class Example(nn.Module):
    def __init__(self):
        super().__init__()
        self.layer = nn.Linear(4, 3)

    def forward(self, x):
        h = self.layer(x) * torch.tensor([1.0, 2.0, 4.0]) + torch.tensor(0.5)
        return h, torch.tensor([1, 2, 3])


INPUTS = [np.linspace(-1.0, 1.0, 2 * 4, dtype=np.float32).reshape(2, 4)]
