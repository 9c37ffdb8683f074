"""ops.transpose permutes all axes: torch.permute."""
import numpy as np
from mindspore import nn, ops


class Example(nn.Cell):
    def __init__(self):
        super().__init__()
        self.layer = nn.Dense(2, 3)

    def construct(self, x):
        return self.layer(ops.transpose(x, (1, 2, 0)))


INPUTS = [np.linspace(-1.0, 1.0, 2 * 3 * 4, dtype=np.float32).reshape(2, 3, 4)]
