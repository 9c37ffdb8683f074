"""nn.Conv2d with padding left at 0, padding=1 and padding=(1, 0): MindSpore needs pad_mode (its default is "same")
and has_bias=True written out."""
import numpy as np
from torch import nn


class Example(nn.Module):
    def __init__(self):
        super().__init__()
        self.valid = nn.Conv2d(3, 4, 3)
        self.padded = nn.Conv2d(4, 4, 3, padding=1)
        self.grouped = nn.Conv2d(4, 2, (3, 1), stride=(1, 2), padding=(1, 0), groups=2, bias=False)

    def forward(self, x):
        return self.grouped(self.padded(self.valid(x)))


INPUTS = [np.linspace(-1.0, 1.0, 2 * 3 * 8 * 8, dtype=np.float32).reshape(2, 3, 8, 8)]
