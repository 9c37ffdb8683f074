"""self.named_parameters(): the parameters by their path names."""
import numpy as np
import torch
from torch import nn


class Example(nn.Module):
    def __init__(self):
        super().__init__()
        self.fc = nn.Linear(4, 3)
        self.out = nn.Linear(3, 2)

    def forward(self, x):
        biases = sum(p.sum() for name, p in self.named_parameters() if name.endswith("bias"))
        names = sorted(name for name, _ in self.named_parameters(prefix="m"))
        return self.out(self.fc(x)) * biases + len(names[0])


INPUTS = [np.linspace(-1.0, 1.0, 2 * 4, dtype=np.float32).reshape(2, 4)]
