"""nn.Softplus at its defaults and with beta=1, threshold=20 written out, around a linear layer: MindSpore's
ops.Softplus primitive, which computes exactly those; the two arguments are dropped."""
import numpy as np
from torch import nn


class Example(nn.Module):
    def __init__(self):
        super().__init__()
        self.first = nn.Softplus()
        self.fc = nn.Linear(6, 6)
        self.second = nn.Softplus(beta=1.0, threshold=20.0)

    def forward(self, x):
        return self.second(self.fc(self.first(x)))


INPUTS = [np.linspace(-6.0, 6.0, 4 * 6, dtype=np.float32).reshape(4, 6)]
