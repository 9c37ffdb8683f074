"""t.logsumexp over one axis (positional, keyword, keepdim) and a tuple."""
import numpy as np
from mindspore import nn


class Example(nn.Cell):
    def __init__(self):
        super().__init__()
        self.layer = nn.Dense(4, 4)

    def construct(self, x):
        h = self.layer(x)
        return h.logsumexp(1), h.logsumexp(-1, True), h.logsumexp(dim=-1, keepdim=True), h.logsumexp((1, 2))


INPUTS = [np.linspace(-1.0, 1.0, 2 * 3 * 4, dtype=np.float32).reshape(2, 3, 4)]
