"""nn.MaxPool2d with stride left out (torch: the kernel size, MindSpore: 1), with padding=1, and with ceil_mode=True
(MindSpore needs pad_mode="pad" for both)."""
import numpy as np
from torch import nn


class Example(nn.Module):
    def __init__(self):
        super().__init__()
        self.default = nn.MaxPool2d(2)
        self.padded = nn.MaxPool2d(3, stride=2, padding=1)
        self.ceil = nn.MaxPool2d(2, 2, ceil_mode=True)

    def forward(self, x):
        return self.default(x), self.padded(x), self.ceil(x)


INPUTS = [np.sin(np.arange(2 * 3 * 7 * 7, dtype=np.float32) * 0.37).reshape(2, 3, 7, 7)]
