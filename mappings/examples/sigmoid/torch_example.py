"""nn.Sigmoid: the same on both sides."""
import numpy as np
from torch import nn


class Example(nn.Module):
    def __init__(self):
        super().__init__()
        self.act = nn.Sigmoid()

    def forward(self, x):
        return self.act(x)


INPUTS = [np.linspace(-5.0, 5.0, 3 * 4, dtype=np.float32).reshape(3, 4)]
