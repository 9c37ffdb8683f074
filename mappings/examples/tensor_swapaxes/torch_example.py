"""t.swapaxes by position, with negative axes and by keyword."""
import numpy as np
from torch import nn


class Example(nn.Module):
    def __init__(self):
        super().__init__()
        self.layer = nn.Linear(4, 4)
        self.head = nn.Linear(3, 2)

    def forward(self, x):
        h = self.layer(x)                                     # (2, 3, 4)
        a = h.swapaxes(1, 2)                                  # (2, 4, 3)
        b = h.swapaxes(-1, -2) * 2
        c = h.swapaxes(axis0=2, axis1=1).swapaxes(0, 1).swapaxes(0, 1)
        return self.head(a + b - c)


INPUTS = [np.linspace(-1.0, 1.0, 2 * 3 * 4, dtype=np.float32).reshape(2, 3, 4)]
