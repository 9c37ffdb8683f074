"""self.apply(fn): fn sees every layer; here it counts them."""
import numpy as np
import torch
from torch import nn


class Example(nn.Module):
    def __init__(self):
        super().__init__()
        self.body = nn.Sequential(nn.Linear(4, 3), nn.Tanh(), nn.Linear(3, 2))
        self.seen = []

    def forward(self, x):
        self.seen.clear()
        self.apply(self.seen.append)
        return self.body(x) * len(self.seen)


INPUTS = [np.linspace(-1.0, 1.0, 2 * 4, dtype=np.float32).reshape(2, 4)]
