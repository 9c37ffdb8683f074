"""nn.Dropout3d in train mode after a 3-D convolution (whole channels dropped, the rest scaled)."""
import numpy as np
from torch import nn


class Example(nn.Module):
    def __init__(self):
        super().__init__()
        self.conv = nn.Conv3d(2, 4, 3, padding=1)
        self.drop = nn.Dropout3d(0.4, inplace=True)

    def forward(self, x):
        return self.drop(self.conv(x))


INPUTS = [np.linspace(-1.0, 1.0, 2 * 2 * 3 * 4 * 4, dtype=np.float32).reshape(2, 2, 3, 4, 4)]
TRAINING = True
