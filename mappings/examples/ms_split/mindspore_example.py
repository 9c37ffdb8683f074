"""ops.split by an int (5 by 2: 2 + 2 + 1), by a list of sizes, and along the default axis 0."""
import numpy as np
from mindspore import nn, ops


class Example(nn.Cell):
    def __init__(self):
        super().__init__()
        self.layer = nn.Dense(5, 5)

    def construct(self, x):
        h = self.layer(x)
        a, b, c = ops.split(h, 2, -1)
        d, e = ops.split(h, [1, 4], axis=1)
        f, g = ops.split(h, 1)
        return ops.cat([c, a, 2 * b], 1) * ops.cat([e, d], 1) + ops.cat([g, f], 0)


INPUTS = [np.linspace(-1.0, 1.0, 2 * 5, dtype=np.float32).reshape(2, 5)]
