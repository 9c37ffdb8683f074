"""MindSpore's nn.Softmax over axis 1 (positional) and axis=-1 on 3-D input: axis is torch's dim."""
import numpy as np
from mindspore import nn


class Example(nn.Cell):
    def __init__(self):
        super().__init__()
        self.middle = nn.Softmax(1)
        self.last = nn.Softmax(axis=-1)

    def construct(self, x):
        return self.middle(x), self.last(x)


INPUTS = [np.sin(np.arange(2 * 3 * 4, dtype=np.float32)).reshape(2, 3, 4) * 2.0]
