"""ops.GeLU, the primitive, computes the tanh approximation: torch's nn.GELU needs approximate="tanh" (its default
is the exact erf form)."""
import numpy as np
from mindspore import nn, ops


class Example(nn.Cell):
    def __init__(self):
        super().__init__()
        self.act = ops.GeLU()

    def construct(self, x):
        return self.act(x)


INPUTS = [np.linspace(-4.0, 4.0, 4 * 16, dtype=np.float32).reshape(4, 16)]
