"""t.unbind along the default axis 0, axis 1 and a keyword -1."""
import numpy as np
from torch import nn


class Example(nn.Module):
    def __init__(self):
        super().__init__()
        self.layer = nn.Linear(4, 4)

    def forward(self, x):
        h = self.layer(x)
        a, b, c = h.unbind(1)
        h0, h1 = h.unbind()
        return a * b + c, h1 - h0, h.unbind(dim=-1)[2]


INPUTS = [np.linspace(-1.0, 1.0, 2 * 3 * 4, dtype=np.float32).reshape(2, 3, 4)]
