"""t.matmul of batches, of a batch by a vector and of two matrices."""
import numpy as np
from torch import nn


class Example(nn.Module):
    def __init__(self):
        super().__init__()
        self.layer = nn.Linear(4, 4)

    def forward(self, x):
        h = self.layer(x)
        return h.matmul(h.transpose(1, 2)), h.matmul(h[0, 0]), h[0].matmul(x[1].transpose(0, 1))


INPUTS = [np.linspace(-1.0, 1.0, 2 * 3 * 4, dtype=np.float32).reshape(2, 3, 4)]
