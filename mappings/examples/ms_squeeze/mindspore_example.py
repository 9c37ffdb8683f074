"""ops.squeeze of every size-1 axis, of one axis, and of a tuple of axes."""
import numpy as np
from mindspore import nn, ops


class Example(nn.Cell):
    def __init__(self):
        super().__init__()
        self.layer = nn.Dense(3, 3)

    def construct(self, x):
        h = self.layer(x)
        return ops.squeeze(h) + ops.squeeze(h, 1) + ops.squeeze(h, axis=(1, 2))


INPUTS = [np.linspace(-1.0, 1.0, 2 * 1 * 1 * 3, dtype=np.float32).reshape(2, 1, 1, 3)]
