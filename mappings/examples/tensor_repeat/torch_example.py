"""Tensor.repeat with the counts as arguments, as one list (VNet's skip connection) and with more counts than
axes, on a layer's output."""
import numpy as np
import torch
from torch import nn


class Example(nn.Module):
    def __init__(self):
        super().__init__()
        self.fc = nn.Linear(4, 3)

    def forward(self, x):
        h = self.fc(x)
        return h.repeat(2, 1), h.repeat([1, 3]), h.repeat(2, 1, 2)


INPUTS = [np.linspace(-2.0, 2.0, 8, dtype=np.float32).reshape(2, 4)]
