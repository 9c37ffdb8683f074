"""ops.Sigmoid, the primitive: torch's nn.Sigmoid module computes the same."""
import numpy as np
from mindspore import nn, ops


class Example(nn.Cell):
    def __init__(self):
        super().__init__()
        self.act = ops.Sigmoid()

    def construct(self, x):
        return self.act(x)


INPUTS = [np.linspace(-5.0, 5.0, 3 * 4, dtype=np.float32).reshape(3, 4)]
