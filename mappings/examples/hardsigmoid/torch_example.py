"""nn.Hardsigmoid, plain and with inplace=True, around a linear layer: MindSpore's HSigmoid; inplace is dropped. The
input spans [-5, 5] (both saturated ends and the ramp between)."""
import numpy as np
from torch import nn


class Example(nn.Module):
    def __init__(self):
        super().__init__()
        self.first = nn.Hardsigmoid()
        self.fc = nn.Linear(6, 6)
        self.second = nn.Hardsigmoid(inplace=True)

    def forward(self, x):
        return self.second(self.fc(self.first(x) * 6.0 - 3.0))


INPUTS = [np.linspace(-5.0, 5.0, 4 * 6, dtype=np.float32).reshape(4, 6)]
