"""nn.MaxPool3d with stride left out (torch: the kernel size, MindSpore: 1), with padding=1, with ceil_mode=True and
with per-axis sizes (MindSpore needs pad_mode="pad" for all but the first)."""
import numpy as np
from torch import nn


class Example(nn.Module):
    def __init__(self):
        super().__init__()
        self.default = nn.MaxPool3d(2)
        self.padded = nn.MaxPool3d(3, stride=2, padding=1)
        self.ceil = nn.MaxPool3d(2, 2, ceil_mode=True)
        self.axes = nn.MaxPool3d((1, 2, 3), stride=(1, 2, 2), padding=(0, 1, 1))

    def forward(self, x):
        return self.default(x), self.padded(x), self.ceil(x), self.axes(x)


INPUTS = [np.sin(np.arange(2 * 3 * 5 * 6 * 7, dtype=np.float32) * 0.37).reshape(2, 3, 5, 6, 7)]
