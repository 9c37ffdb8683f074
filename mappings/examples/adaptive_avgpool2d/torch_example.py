"""nn.AdaptiveAvgPool2d to a size that does not divide the input, and to 1."""
import numpy as np
from torch import nn


class Example(nn.Module):
    def __init__(self):
        super().__init__()
        self.grid = nn.AdaptiveAvgPool2d((2, 3))
        self.one = nn.AdaptiveAvgPool2d(1)

    def forward(self, x):
        return self.grid(x), self.one(x)


INPUTS = [np.sin(np.arange(2 * 3 * 7 * 7, dtype=np.float32) * 0.37).reshape(2, 3, 7, 7)]
