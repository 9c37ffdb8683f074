"""t.narrow along a positive and a negative axis, start and length by keyword."""
import numpy as np
from torch import nn


class Example(nn.Module):
    def __init__(self):
        super().__init__()
        self.layer = nn.Linear(4, 4)

    def forward(self, x):
        h = self.layer(x)
        return h.narrow(1, 0, 2), h.narrow(-1, 1, 2), h.narrow(2, start=1, length=3)


INPUTS = [np.linspace(-1.0, 1.0, 2 * 3 * 4, dtype=np.float32).reshape(2, 3, 4)]
