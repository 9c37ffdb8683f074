"""nn.LayerNorm with an int shape and the default eps, on input of small variance: MindSpore needs a tuple shape and
epsilon=1e-05 written out (its default is 1e-07)."""
import numpy as np
from torch import nn


class Example(nn.Module):
    def __init__(self):
        super().__init__()
        self.small = nn.LayerNorm(6)
        self.listed = nn.LayerNorm([6], eps=1e-6)

    def forward(self, x):
        return self.listed(self.small(x))


INPUTS = [np.linspace(-0.01, 0.01, 2 * 4 * 6, dtype=np.float32).reshape(2, 4, 6)]
