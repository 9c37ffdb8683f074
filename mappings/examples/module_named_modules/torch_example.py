"""self.named_modules(), with and without a prefix: the same names."""
import numpy as np
import torch
from torch import nn


class Example(nn.Module):
    def __init__(self):
        super().__init__()
        self.body = nn.Sequential(nn.Linear(4, 3), nn.Tanh())

    def forward(self, x):
        names = [name for name, _ in self.named_modules()]
        prefixed = [name for name, _ in self.named_modules(prefix="net")]
        scale = len(names) + 10 * len([n for n in prefixed if n.startswith("net.body")]) + 100 * len(names[0])
        return self.body(x) * scale


INPUTS = [np.linspace(-1.0, 1.0, 2 * 4, dtype=np.float32).reshape(2, 4)]
