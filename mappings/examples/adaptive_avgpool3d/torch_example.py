"""nn.AdaptiveAvgPool3d to a size that does not divide the input, keeping one axis (None), and to 1."""
import numpy as np
from torch import nn


class Example(nn.Module):
    def __init__(self):
        super().__init__()
        self.grid = nn.AdaptiveAvgPool3d((2, 4, 3))
        self.keep = nn.AdaptiveAvgPool3d((None, 3, 4))
        self.one = nn.AdaptiveAvgPool3d(1)

    def forward(self, x):
        return self.grid(x), self.keep(x), self.one(x)


INPUTS = [np.sin(np.arange(2 * 3 * 5 * 6 * 7, dtype=np.float32) * 0.37).reshape(2, 3, 5, 6, 7)]
