"""nn.PReLU with one shared slope (the default) and with one slope per channel starting at 0.1: num_parameters is
MindSpore's channel, init its w."""
import numpy as np
from torch import nn


class Example(nn.Module):
    def __init__(self):
        super().__init__()
        self.shared = nn.PReLU()
        self.conv = nn.Conv2d(3, 4, 1)
        self.per_channel = nn.PReLU(num_parameters=4, init=0.1)

    def forward(self, x):
        return self.per_channel(self.conv(self.shared(x)))


INPUTS = [np.linspace(-2.0, 2.0, 2 * 3 * 4 * 4, dtype=np.float32).reshape(2, 3, 4, 4)]
