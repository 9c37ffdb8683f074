"""nn.ELU at its default alpha and with alpha=1.0 written out, inplace=True: MindSpore's ELU computes alpha=1.0
only, which is the default on both sides; inplace is dropped."""
import numpy as np
from torch import nn


class Example(nn.Module):
    def __init__(self):
        super().__init__()
        self.default = nn.ELU()
        self.fc = nn.Linear(6, 6)
        self.written = nn.ELU(alpha=1.0, inplace=True)

    def forward(self, x):
        return self.written(self.fc(self.default(x)))


INPUTS = [np.linspace(-4.0, 4.0, 4 * 6, dtype=np.float32).reshape(4, 6)]
