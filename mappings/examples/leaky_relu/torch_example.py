"""nn.LeakyReLU at its default slope and with negative_slope=0.2, inplace=True: MindSpore's alpha defaults to 0.2,
so alpha=0.01 is written out; inplace is dropped."""
import numpy as np
from torch import nn


class Example(nn.Module):
    def __init__(self):
        super().__init__()
        self.default = nn.LeakyReLU()
        self.fc = nn.Linear(6, 6)
        self.steeper = nn.LeakyReLU(0.2, inplace=True)

    def forward(self, x):
        return self.steeper(self.fc(self.default(x)))


INPUTS = [np.linspace(-3.0, 3.0, 4 * 6, dtype=np.float32).reshape(4, 6)]
