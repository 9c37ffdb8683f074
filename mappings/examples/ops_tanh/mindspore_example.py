"""ops.Tanh, the primitive: torch's nn.Tanh module computes the same."""
import numpy as np
from mindspore import nn, ops


class Example(nn.Cell):
    def __init__(self):
        super().__init__()
        self.act = ops.Tanh()

    def construct(self, x):
        return self.act(x)


INPUTS = [np.linspace(-3.0, 3.0, 3 * 4, dtype=np.float32).reshape(3, 4)]
