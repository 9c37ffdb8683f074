"""nn.ReflectionPad3d with an int padding and a six-element tuple, after a convolution: the same class and arguments
in MindSpore."""
import numpy as np
from torch import nn


class Example(nn.Module):
    def __init__(self):
        super().__init__()
        self.conv = nn.Conv3d(2, 2, 3)
        self.both = nn.ReflectionPad3d(1)
        self.uneven = nn.ReflectionPad3d((1, 2, 0, 1, 2, 0))

    def forward(self, x):
        return self.uneven(self.both(self.conv(x)))


INPUTS = [np.sin(np.arange(2 * 2 * 5 * 5 * 6, dtype=np.float32)).reshape(2, 2, 5, 5, 6)]
