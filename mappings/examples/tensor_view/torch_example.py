"""t.view with sizes, -1 and a tuple."""
import numpy as np
import torch
from torch import nn


class Example(nn.Module):
    def __init__(self):
        super().__init__()
        self.layer = nn.Linear(4, 4)
        self.head = nn.Linear(12, 3)

    def forward(self, x):
        h = self.layer(x)
        return self.head(h.view(2, -1)) + self.head(h.view((2, 12)))


INPUTS = [np.linspace(-1.0, 1.0, 2 * 3 * 4, dtype=np.float32).reshape(2, 3, 4)]
