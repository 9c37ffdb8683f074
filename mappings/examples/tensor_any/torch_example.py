"""t.any over every axis, one axis (positional, keyword, keepdim) and a tuple, of bools, of a float tensor with
zeros in it and of an integer one; the bools scale a float tensor."""
import numpy as np
from torch import nn


class Example(nn.Module):
    def __init__(self):
        super().__init__()
        self.layer = nn.Linear(4, 4)

    def forward(self, x):
        h = self.layer(x)
        g = h > 0.2
        zeroed = h * g                 # a float tensor with zeros in it: rows of it are all zero
        counts = (h * 3).long()        # an integer one
        return (h * g.any(-1, True), h * g.any(dim=1, keepdim=True), h * g.any(), h * (h > 5).any(),
                h[0] * g.any((0, 1)), h * zeroed.any(-1, True), h * counts.any(dim=2, keepdim=True))


INPUTS = [np.linspace(-1.0, 1.0, 2 * 3 * 4, dtype=np.float32).reshape(2, 3, 4)]
