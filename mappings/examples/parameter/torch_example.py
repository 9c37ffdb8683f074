"""nn.Parameter: a learned scale, and a frozen shift given requires_grad by position."""
import numpy as np
import torch
from torch import nn


class Example(nn.Module):
    def __init__(self):
        super().__init__()
        self.layer = nn.Linear(4, 3)
        self.scale = nn.Parameter(torch.full((3,), 0.5))
        self.shift = nn.Parameter(torch.ones(3), False)

    def forward(self, x):
        if isinstance(self.scale, nn.Parameter):
            return self.layer(x) * self.scale + self.shift
        return x


INPUTS = [np.linspace(-1.0, 1.0, 2 * 4, dtype=np.float32).reshape(2, 4)]
