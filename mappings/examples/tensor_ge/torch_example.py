"""t.ge against a tensor and a number (positional and keyword); the bools scale a float tensor."""
import numpy as np
from torch import nn


class Example(nn.Module):
    def __init__(self):
        super().__init__()
        self.layer = nn.Linear(4, 4)

    def forward(self, x):
        h = self.layer(x)
        r = (h * 2).round()
        return h * r.ge(0), h * h.ge(x), h * r.ge(other=1)


INPUTS = [np.linspace(-1.0, 1.0, 2 * 3 * 4, dtype=np.float32).reshape(2, 3, 4)]
