"""self.children(): the direct child layers, in order."""
import numpy as np
import torch
from torch import nn


class Example(nn.Module):
    def __init__(self):
        super().__init__()
        self.fc = nn.Linear(4, 3)
        self.act = nn.Tanh()
        self.out = nn.Linear(3, 2)

    def forward(self, x):
        for layer in self.children():
            x = layer(x)
        return x


INPUTS = [np.linspace(-1.0, 1.0, 2 * 4, dtype=np.float32).reshape(2, 4)]
