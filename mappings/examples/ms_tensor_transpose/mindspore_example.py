"""MindSpore's t.transpose(dim0, dim1) swaps two axes (PyNative), as torch's does."""
import numpy as np
from mindspore import nn


class Example(nn.Cell):
    def __init__(self):
        super().__init__()
        self.layer = nn.Dense(4, 3)

    def construct(self, x):
        return self.layer(x.transpose(1, 2)) * self.layer(x.transpose(-1, 1))


INPUTS = [np.linspace(-1.0, 1.0, 2 * 4 * 3, dtype=np.float32).reshape(2, 4, 3)]
