"""nn.AvgPool3d with stride left out (torch: the kernel size, MindSpore: 1), with padding=1 counting the padding or
not, with ceil_mode=True (MindSpore needs pad_mode="pad" for it) and with divisor_override."""
import numpy as np
from torch import nn


class Example(nn.Module):
    def __init__(self):
        super().__init__()
        self.default = nn.AvgPool3d(2)
        self.padded = nn.AvgPool3d(3, stride=2, padding=1)
        self.uncounted = nn.AvgPool3d(3, 2, 1, count_include_pad=False)
        self.ceil = nn.AvgPool3d(2, 2, ceil_mode=True)
        self.divisor = nn.AvgPool3d(2, divisor_override=3)

    def forward(self, x):
        return self.default(x), self.padded(x), self.uncounted(x), self.ceil(x), self.divisor(x)


INPUTS = [np.sin(np.arange(2 * 3 * 5 * 6 * 7, dtype=np.float32) * 0.37).reshape(2, 3, 5, 6, 7)]
