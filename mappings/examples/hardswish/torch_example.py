"""nn.Hardswish, plain and with inplace=True, around a linear layer: MindSpore's HSwish; inplace is dropped. The
input spans [-5, 5] (both saturated ends and the curve between; never exactly -3 or 3, where the gradients differ)."""
import numpy as np
from torch import nn


class Example(nn.Module):
    def __init__(self):
        super().__init__()
        self.first = nn.Hardswish()
        self.fc = nn.Linear(6, 6)
        self.second = nn.Hardswish(inplace=True)

    def forward(self, x):
        return self.second(self.fc(self.first(x)))


INPUTS = [np.linspace(-5.0, 5.0, 4 * 6, dtype=np.float32).reshape(4, 6)]
