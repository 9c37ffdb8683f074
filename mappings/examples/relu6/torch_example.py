"""nn.ReLU6 with and without inplace=True on both sides of a linear layer: the same layer in MindSpore; inplace is
dropped. The input spans [-8, 8], both kinks' sides included."""
import numpy as np
from torch import nn


class Example(nn.Module):
    def __init__(self):
        super().__init__()
        self.first = nn.ReLU6()
        self.fc = nn.Linear(6, 6)
        self.second = nn.ReLU6(inplace=True)

    def forward(self, x):
        return self.second(self.fc(self.first(x) * 2.0 - 5.0))


INPUTS = [np.linspace(-8.0, 8.0, 4 * 6, dtype=np.float32).reshape(4, 6)]
