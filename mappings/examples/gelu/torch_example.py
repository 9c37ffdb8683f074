"""nn.GELU at its default (exact erf) and with approximate="tanh": MindSpore's default is the tanh form, so
approximate=False is written out."""
import numpy as np
from torch import nn


class Example(nn.Module):
    def __init__(self):
        super().__init__()
        self.exact = nn.GELU()
        self.tanh = nn.GELU(approximate="tanh")

    def forward(self, x):
        return self.exact(x), self.tanh(x)


INPUTS = [np.linspace(-4.0, 4.0, 4 * 16, dtype=np.float32).reshape(4, 16)]
