"""nn.AvgPool2d with stride left out (torch: the kernel size, MindSpore: 1) and with padding=1, counting the padding
or not."""
import numpy as np
from torch import nn


class Example(nn.Module):
    def __init__(self):
        super().__init__()
        self.default = nn.AvgPool2d(2)
        self.padded = nn.AvgPool2d(3, stride=2, padding=1)
        self.uncounted = nn.AvgPool2d(3, 2, 1, count_include_pad=False)

    def forward(self, x):
        return self.default(x), self.padded(x), self.uncounted(x)


INPUTS = [np.sin(np.arange(2 * 3 * 7 * 7, dtype=np.float32) * 0.37).reshape(2, 3, 7, 7)]
