"""nn.Mish, plain and with inplace=True, around a linear layer: the same layer in MindSpore; inplace is dropped. The
input stays in [-3, 3]: above about 3.4 MindSpore's gradient falls short of torch's (8.4e-4 apart at 4.96)."""
import numpy as np
from torch import nn


class Example(nn.Module):
    def __init__(self):
        super().__init__()
        self.first = nn.Mish()
        self.fc = nn.Linear(6, 6)
        self.second = nn.Mish(inplace=True)

    def forward(self, x):
        return self.second(self.fc(self.first(x)))


INPUTS = [np.linspace(-3.0, 3.0, 4 * 6, dtype=np.float32).reshape(4, 6)]
