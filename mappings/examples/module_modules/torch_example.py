"""self.modules(): this layer and every one below it, counted by kind."""
import numpy as np
import torch
from torch import nn


class Example(nn.Module):
    def __init__(self):
        super().__init__()
        self.body = nn.Sequential(nn.Linear(4, 3), nn.Tanh(), nn.Linear(3, 3))

    def forward(self, x):
        linear = sum(1 for m in self.modules() if isinstance(m, nn.Linear))
        return self.body(x) * linear


INPUTS = [np.linspace(-1.0, 1.0, 2 * 4, dtype=np.float32).reshape(2, 4)]
