"""torch.full_like: the input's shape and dtype (an int tensor filled with 2.5 holds 2 on both sides)."""
import numpy as np
import torch
from torch import nn


class Example(nn.Module):
    def __init__(self):
        super().__init__()
        self.layer = nn.Linear(4, 3)

    def forward(self, x):
        h = self.layer(x)
        counts = torch.ones_like(h, dtype=torch.int64)
        return h * torch.full_like(h, 0.5), torch.full_like(counts, 2.5)


INPUTS = [np.linspace(-1.0, 1.0, 2 * 4, dtype=np.float32).reshape(2, 4)]
