"""t.new_zeros with a tuple, the tensor's shape, a list and dtype=."""
import numpy as np
import torch
from torch import nn


class Example(nn.Module):
    def __init__(self):
        super().__init__()
        self.layer = nn.Linear(4, 4)

    def forward(self, x):
        h = self.layer(x)
        return h + h.new_zeros((2, 3, 4)) + h.new_zeros(h.shape), h[0, 0] * h.new_zeros([4], dtype=torch.float32), h.new_zeros((2,), dtype=torch.float64)


INPUTS = [np.linspace(-1.0, 1.0, 2 * 3 * 4, dtype=np.float32).reshape(2, 3, 4)]
