"""t.split by an int (5 by 2: 2 + 2 + 1), by a list of sizes, and along the default dim 0."""
import numpy as np
import torch
from torch import nn


class Example(nn.Module):
    def __init__(self):
        super().__init__()
        self.layer = nn.Linear(5, 5)

    def forward(self, x):
        h = self.layer(x)
        a, b, c = h.split(2, -1)
        d, e = h.split([1, 4], dim=1)
        f, g = h.split(1)
        return torch.cat([c, a, 2 * b], 1) * torch.cat([e, d], 1) + torch.cat([g, f], 0)


INPUTS = [np.linspace(-1.0, 1.0, 2 * 5, dtype=np.float32).reshape(2, 5)]
