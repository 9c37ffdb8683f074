"""self.parameters(), every one and this layer's own only (recurse=False)."""
import numpy as np
import torch
from torch import nn


class Example(nn.Module):
    def __init__(self):
        super().__init__()
        self.fc = nn.Linear(4, 3)
        self.out = nn.Linear(3, 2)

    def forward(self, x):
        total = sum(p.sum() for p in self.parameters())
        own = len(list(self.parameters(recurse=False)))
        return self.out(self.fc(x)) + total + own


INPUTS = [np.linspace(-1.0, 1.0, 2 * 4, dtype=np.float32).reshape(2, 4)]
