"""ops.bmm of two batched 3-D tensors: torch.bmm."""
import numpy as np
from mindspore import nn, ops


class Example(nn.Cell):
    def __init__(self):
        super().__init__()
        self.layer = nn.Dense(4, 4)

    def construct(self, x):
        h = self.layer(x)
        return ops.bmm(h, ops.swapaxes(x, 1, 2))


INPUTS = [np.linspace(-1.0, 1.0, 2 * 3 * 4, dtype=np.float32).reshape(2, 3, 4)]
