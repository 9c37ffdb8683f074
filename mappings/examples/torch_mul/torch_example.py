"""torch.mul of two tensors, of a broadcast row, and of a number, on a layer's output."""
import numpy as np
import torch
from torch import nn


class Example(nn.Module):
    def __init__(self):
        super().__init__()
        self.fc = nn.Linear(4, 4)

    def forward(self, x):
        h = self.fc(x)
        return torch.mul(h, x), torch.mul(h, x[0]), torch.mul(input=h, other=2.5)


INPUTS = [np.linspace(-2.0, 2.0, 8, dtype=np.float32).reshape(2, 4)]
