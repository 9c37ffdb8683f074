"""nn.Flatten at its defaults (from dim 1) and over dims 0..1."""
import numpy as np
from torch import nn


class Example(nn.Module):
    def __init__(self):
        super().__init__()
        self.batch = nn.Flatten()
        self.leading = nn.Flatten(0, 1)

    def forward(self, x):
        return self.batch(x), self.leading(x)


INPUTS = [np.linspace(-1.0, 1.0, 2 * 3 * 4 * 5, dtype=np.float32).reshape(2, 3, 4, 5)]
