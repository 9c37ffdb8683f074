"""t.flatten(1) and t.flatten(): the method's start_dim defaults to 0 on both sides."""
import numpy as np
import torch
from torch import nn


class Example(nn.Module):
    def __init__(self):
        super().__init__()
        self.layer = nn.Linear(12, 3)
        self.head = nn.Linear(24, 3)

    def forward(self, x):
        return self.layer(x.flatten(1)) + self.head(x.flatten())


INPUTS = [np.linspace(-1.0, 1.0, 2 * 3 * 4, dtype=np.float32).reshape(2, 3, 4)]
