"""self.add_module and its alias self.register_module: children set by name."""
import numpy as np
import torch
from torch import nn


class Example(nn.Module):
    def __init__(self):
        super().__init__()
        self.add_module("fc", nn.Linear(4, 3))
        self.register_module("out", nn.Linear(3, 2))

    def forward(self, x):
        return self.out(self.fc(x))


INPUTS = [np.linspace(-1.0, 1.0, 2 * 4, dtype=np.float32).reshape(2, 4)]
