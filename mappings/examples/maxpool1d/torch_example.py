"""nn.MaxPool1d with stride left out (torch: the kernel size, MindSpore: 1), with padding=1, with ceil_mode=True and
with dilation=2 (MindSpore needs pad_mode="pad" for the last three)."""
import numpy as np
from torch import nn


class Example(nn.Module):
    def __init__(self):
        super().__init__()
        self.default = nn.MaxPool1d(2)
        self.padded = nn.MaxPool1d(3, stride=2, padding=1)
        self.ceil = nn.MaxPool1d(2, 2, ceil_mode=True)
        self.dilated = nn.MaxPool1d(3, 1, dilation=2)

    def forward(self, x):
        return self.default(x), self.padded(x), self.ceil(x), self.dilated(x)


INPUTS = [np.sin(np.arange(2 * 3 * 11, dtype=np.float32) * 0.37).reshape(2, 3, 11)]
