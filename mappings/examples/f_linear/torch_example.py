"""F.linear with and without bias, on a Linear's own weight and bias: ops.dense."""
import numpy as np
import torch
import torch.nn.functional as F
from torch import nn


class Example(nn.Module):
    def __init__(self):
        super().__init__()
        self.proj = nn.Linear(4, 3)

    def forward(self, x):
        return F.linear(x, self.proj.weight, self.proj.bias) + F.linear(x, self.proj.weight)


INPUTS = [np.linspace(-1.0, 1.0, 2 * 3 * 4, dtype=np.float32).reshape(2, 3, 4)]
