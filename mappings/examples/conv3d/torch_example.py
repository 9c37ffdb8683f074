"""nn.Conv3d with padding left at 0 and padding=(1, 0, 1): MindSpore needs pad_mode (its default is "same"), six
padding values and has_bias=True written out."""
import numpy as np
from torch import nn


class Example(nn.Module):
    def __init__(self):
        super().__init__()
        self.valid = nn.Conv3d(3, 4, 3)
        self.padded = nn.Conv3d(4, 2, (3, 1, 3), stride=(1, 2, 1), padding=(1, 0, 1), groups=2, bias=False)

    def forward(self, x):
        return self.padded(self.valid(x))


INPUTS = [np.linspace(-1.0, 1.0, 2 * 3 * 5 * 6 * 7, dtype=np.float32).reshape(2, 3, 5, 6, 7)]
