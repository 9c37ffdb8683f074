"""t.expand with sizes, a tuple, -1 and an extra leading size."""
import numpy as np
from torch import nn


class Example(nn.Module):
    def __init__(self):
        super().__init__()
        self.layer = nn.Linear(4, 4)

    def forward(self, x):
        h = self.layer(x)
        s = h[:, :1]
        return s.expand(2, 3, 4), s.expand((2, 3, 4)), s.expand(-1, 3, -1), s.expand(5, 2, 3, 4)


INPUTS = [np.linspace(-1.0, 1.0, 2 * 3 * 4, dtype=np.float32).reshape(2, 3, 4)]
