"""nn.ModuleList built from a list and grown with append, iterated in forward."""
import numpy as np
import torch
from torch import nn


class Example(nn.Module):
    def __init__(self):
        super().__init__()
        self.layers = nn.ModuleList([nn.Linear(4, 4) for _ in range(2)])
        self.layers.append(nn.Linear(4, 2))

    def forward(self, x):
        for layer in self.layers:
            x = torch.tanh(layer(x))
        return x


INPUTS = [np.linspace(-1.0, 1.0, 3 * 4, dtype=np.float32).reshape(3, 4)]
