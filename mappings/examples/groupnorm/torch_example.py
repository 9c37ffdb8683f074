"""nn.GroupNorm at the default eps and at eps=1e-3 on input of small variance (eps shows there); weight and bias
are MindSpore's gamma and beta."""
import numpy as np
from torch import nn


class Example(nn.Module):
    def __init__(self):
        super().__init__()
        self.small = nn.GroupNorm(3, 6, eps=1e-3)
        self.conv = nn.Conv2d(6, 4, 1)
        self.default = nn.GroupNorm(2, 4)

    def forward(self, x):
        return self.default(self.conv(self.small(x)))


INPUTS = [np.sin(np.arange(2 * 6 * 4 * 4, dtype=np.float32) * 0.3).reshape(2, 6, 4, 4) * 1e-3]
