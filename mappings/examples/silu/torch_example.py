"""nn.SiLU, with and without inplace (dropped: MindSpore has no in-place SiLU)."""
import numpy as np
from torch import nn


class Example(nn.Module):
    def __init__(self):
        super().__init__()
        self.act = nn.SiLU()
        self.fc = nn.Linear(4, 4)
        self.inplace = nn.SiLU(inplace=True)

    def forward(self, x):
        return self.inplace(self.fc(self.act(x)))


INPUTS = [np.linspace(-3.0, 3.0, 3 * 4, dtype=np.float32).reshape(3, 4)]
