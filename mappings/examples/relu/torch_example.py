"""nn.ReLU, with and without inplace (dropped: MindSpore has no in-place ReLU)."""
import numpy as np
from torch import nn


class Example(nn.Module):
    def __init__(self):
        super().__init__()
        self.act = nn.ReLU()
        self.fc = nn.Linear(4, 4)
        self.inplace = nn.ReLU(inplace=True)

    def forward(self, x):
        return self.inplace(self.fc(self.act(x)))


INPUTS = [np.linspace(-1.0, 1.0, 3 * 4, dtype=np.float32).reshape(3, 4)]
