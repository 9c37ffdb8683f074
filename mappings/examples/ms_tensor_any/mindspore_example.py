"""t.any over every axis, one axis (positional, keyword, keepdim) and a tuple; the bools scale a float tensor."""
import numpy as np
from mindspore import nn


class Example(nn.Cell):
    def __init__(self):
        super().__init__()
        self.layer = nn.Dense(4, 4)

    def construct(self, x):
        h = self.layer(x)
        g = h > 0.2
        return h * g.any(-1, True), h * g.any(axis=1, keep_dims=True), h * g.any(), h * (h > 5).any(), h[0] * g.any((0, 1))


INPUTS = [np.linspace(-1.0, 1.0, 2 * 3 * 4, dtype=np.float32).reshape(2, 3, 4)]
