"""t.pow by an int, a float, a tensor and by keyword."""
import numpy as np
from torch import nn


class Example(nn.Module):
    def __init__(self):
        super().__init__()
        self.layer = nn.Linear(4, 4)

    def forward(self, x):
        h = self.layer(x)
        p = h * h + 0.5
        return h.pow(2), p.pow(0.5), h.pow(exponent=3), p.pow(x)


INPUTS = [np.linspace(-1.0, 1.0, 2 * 3 * 4, dtype=np.float32).reshape(2, 3, 4)]
