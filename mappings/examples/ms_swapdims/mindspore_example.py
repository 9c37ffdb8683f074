"""ops.swapdims swaps two axes: torch.transpose."""
import numpy as np
from mindspore import nn, ops


class Example(nn.Cell):
    def __init__(self):
        super().__init__()
        self.layer = nn.Dense(4, 3)

    def construct(self, x):
        return self.layer(ops.swapdims(x, 1, 2))


INPUTS = [np.linspace(-1.0, 1.0, 2 * 4 * 3, dtype=np.float32).reshape(2, 4, 3)]
