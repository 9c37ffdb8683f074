"""nn.ReflectionPad2d with an int padding and a (left, right, top, bottom) tuple, after a convolution: the same class
and arguments in MindSpore."""
import numpy as np
from torch import nn


class Example(nn.Module):
    def __init__(self):
        super().__init__()
        self.conv = nn.Conv2d(2, 3, 3)
        self.both = nn.ReflectionPad2d(1)
        self.uneven = nn.ReflectionPad2d((1, 2, 0, 3))

    def forward(self, x):
        return self.uneven(self.both(self.conv(x)))


INPUTS = [np.sin(np.arange(2 * 2 * 6 * 7, dtype=np.float32)).reshape(2, 2, 6, 7)]
