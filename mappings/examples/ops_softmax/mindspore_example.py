"""ops.Softmax with axis left out (the last axis) and axis=1 on 3-D input: torch's nn.Softmax needs dim=-1 written
out (its own default picks dim 0 for 3-D input)."""
import numpy as np
from mindspore import nn, ops


class Example(nn.Cell):
    def __init__(self):
        super().__init__()
        self.last = ops.Softmax()
        self.middle = ops.Softmax(axis=1)

    def construct(self, x):
        return self.last(x), self.middle(x)


INPUTS = [np.sin(np.arange(2 * 3 * 4, dtype=np.float32)).reshape(2, 3, 4) * 2.0]
