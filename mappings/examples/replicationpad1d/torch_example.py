"""nn.ReplicationPad1d with an int padding and a (left, right) tuple, after a convolution: the same class and arguments
in MindSpore."""
import numpy as np
from torch import nn


class Example(nn.Module):
    def __init__(self):
        super().__init__()
        self.conv = nn.Conv1d(2, 3, 3)
        self.both = nn.ReplicationPad1d(2)
        self.uneven = nn.ReplicationPad1d((1, 3))

    def forward(self, x):
        return self.uneven(self.both(self.conv(x)))


INPUTS = [np.sin(np.arange(2 * 2 * 8, dtype=np.float32)).reshape(2, 2, 8)]
