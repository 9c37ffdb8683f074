"""t.chunk with uneven sizes (5 in 2: 3 + 2; 5 in 3: 2 + 2 + 1) and the default dim 0."""
import numpy as np
import torch
from torch import nn


class Example(nn.Module):
    def __init__(self):
        super().__init__()
        self.layer = nn.Linear(5, 5)

    def forward(self, x):
        h = self.layer(x)
        a, b = h.chunk(2, -1)
        c, d, e = h.chunk(3, dim=1)
        f, g = h.chunk(2)
        return torch.cat([b, a], 1) * torch.cat([e, 2 * d, c], 1) + torch.cat([g, f], 0)


INPUTS = [np.linspace(-1.0, 1.0, 2 * 5, dtype=np.float32).reshape(2, 5)]
