"""ops.ReLU, the primitive, created once and called in construct: torch's nn.ReLU module computes the same."""
import numpy as np
from mindspore import nn, ops


class Example(nn.Cell):
    def __init__(self):
        super().__init__()
        self.act = ops.ReLU()

    def construct(self, x):
        return self.act(x)


INPUTS = [np.linspace(-1.0, 1.0, 3 * 4, dtype=np.float32).reshape(3, 4)]
