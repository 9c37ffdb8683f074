"""ops.softmax on a 3-D tensor along axis 1 and the last axis, by place and by keyword."""
import numpy as np
from mindspore import nn, ops


class Example(nn.Cell):
    def __init__(self):
        super().__init__()
        self.layer = nn.Dense(4, 4)

    def construct(self, x):
        h = self.layer(x)
        return ops.softmax(h, 1) * ops.softmax(h, axis=-1)


INPUTS = [np.linspace(-2.0, 2.0, 2 * 3 * 4, dtype=np.float32).reshape(2, 3, 4)]
