"""t.all over every axis, one axis (positional, keyword, keepdim) and a tuple; the bools scale a float tensor."""
import numpy as np
from torch import nn


class Example(nn.Module):
    def __init__(self):
        super().__init__()
        self.layer = nn.Linear(4, 4)

    def forward(self, x):
        h = self.layer(x)
        g = h > -0.3
        return h * g.all(-1, True), h * g.all(dim=1, keepdim=True), h * g.all(), h * (h > -5).all(), h[0] * g.all((0, 1))


INPUTS = [np.linspace(-1.0, 1.0, 2 * 3 * 4, dtype=np.float32).reshape(2, 3, 4)]
