"""ops.chunk with uneven sizes (5 in 2: 3 + 2; 5 in 3: 2 + 2 + 1) and the default axis 0."""
import numpy as np
from mindspore import nn, ops


class Example(nn.Cell):
    def __init__(self):
        super().__init__()
        self.layer = nn.Dense(5, 5)

    def construct(self, x):
        h = self.layer(x)
        a, b = ops.chunk(h, 2, -1)
        c, d, e = ops.chunk(h, 3, axis=1)
        f, g = ops.chunk(h, 2)
        return ops.cat([b, a], 1) * ops.cat([e, 2 * d, c], 1) + ops.cat([g, f], 0)


INPUTS = [np.linspace(-1.0, 1.0, 2 * 5, dtype=np.float32).reshape(2, 5)]
