"""t.sin() on a layer's output and on large inputs (a rotary-style angle table)."""
import numpy as np
from torch import nn


class Example(nn.Module):
    def __init__(self):
        super().__init__()
        self.layer = nn.Linear(4, 4)

    def forward(self, x):
        h = self.layer(x)
        return h.sin(), (x * 1000.0).sin() * h


INPUTS = [np.linspace(-1.0, 1.0, 2 * 3 * 4, dtype=np.float32).reshape(2, 3, 4)]
