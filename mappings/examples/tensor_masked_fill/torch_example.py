"""t.masked_fill with a float, a large negative, an int by keyword and a broadcast mask."""
import numpy as np
from torch import nn


class Example(nn.Module):
    def __init__(self):
        super().__init__()
        self.layer = nn.Linear(4, 4)

    def forward(self, x):
        h = self.layer(x)
        return h.masked_fill(h > 0, 0.0), h.masked_fill(x < 0, -1e9), h.masked_fill(mask=h < 0, value=2), h.masked_fill(x[0] > 0, 1.5)


INPUTS = [np.linspace(-1.0, 1.0, 2 * 3 * 4, dtype=np.float32).reshape(2, 3, 4)]
