"""nn.CELU at its default alpha and with alpha=0.5 (positional), inplace=True: the same alpha in MindSpore; inplace is
dropped."""
import numpy as np
from torch import nn


class Example(nn.Module):
    def __init__(self):
        super().__init__()
        self.default = nn.CELU()
        self.fc = nn.Linear(6, 6)
        self.sharper = nn.CELU(0.5, inplace=True)

    def forward(self, x):
        return self.sharper(self.fc(self.default(x)))


INPUTS = [np.linspace(-4.0, 4.0, 4 * 6, dtype=np.float32).reshape(4, 6)]
