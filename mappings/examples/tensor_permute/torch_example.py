"""t.permute with the axes as arguments and as a tuple with a negative axis."""
import numpy as np
import torch
from torch import nn


class Example(nn.Module):
    def __init__(self):
        super().__init__()
        self.layer = nn.Linear(2, 3)

    def forward(self, x):
        return self.layer(x.permute(1, 2, 0)) + self.layer(x.permute((1, -1, 0)))


INPUTS = [np.linspace(-1.0, 1.0, 2 * 3 * 4, dtype=np.float32).reshape(2, 3, 4)]
