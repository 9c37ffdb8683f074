"""ops.expand_dims at 1 and -1: torch.unsqueeze."""
import numpy as np
from mindspore import nn, ops


class Example(nn.Cell):
    def __init__(self):
        super().__init__()
        self.layer = nn.Dense(3, 3)

    def construct(self, x):
        h = self.layer(x)
        return ops.expand_dims(h, 1) + ops.expand_dims(h, axis=-1)


INPUTS = [np.linspace(-1.0, 1.0, 2 * 3, dtype=np.float32).reshape(2, 3)]
