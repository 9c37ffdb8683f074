"""torch.sigmoid: ops.sigmoid."""
import numpy as np
import torch
from torch import nn


class Example(nn.Module):
    def __init__(self):
        super().__init__()
        self.layer = nn.Linear(4, 3)

    def forward(self, x):
        return torch.sigmoid(self.layer(x))


INPUTS = [np.linspace(-2.0, 2.0, 2 * 4, dtype=np.float32).reshape(2, 4)]
