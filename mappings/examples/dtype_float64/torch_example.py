"""torch.float64 and its alias torch.double: a float64 output on both sides."""
import numpy as np
import torch
from torch import nn


class Example(nn.Module):
    def __init__(self):
        super().__init__()
        self.layer = nn.Linear(4, 3)

    def forward(self, x):
        scale = torch.full((2, 3), 0.25, dtype=torch.float64)
        return self.layer(x), scale + torch.ones(2, 3, dtype=torch.double)


INPUTS = [np.linspace(-1.0, 1.0, 2 * 4, dtype=np.float32).reshape(2, 4)]
