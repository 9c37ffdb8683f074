"""nn.Dropout2d in train mode after a convolution (whole channels dropped, the rest scaled), p given and default."""
import numpy as np
from torch import nn


class Example(nn.Module):
    def __init__(self):
        super().__init__()
        self.conv = nn.Conv2d(2, 4, 3, padding=1)
        self.drop = nn.Dropout2d(p=0.25)
        self.again = nn.Dropout2d()

    def forward(self, x):
        return self.again(self.drop(self.conv(x)))


INPUTS = [np.linspace(-1.0, 1.0, 2 * 2 * 5 * 5, dtype=np.float32).reshape(2, 2, 5, 5)]
TRAINING = True
