"""A model class: nn.Module becomes nn.Cell; super().__init__() and the attributes stay as they are."""
import numpy as np
from torch import nn


class Block(nn.Module):
    def __init__(self):
        super().__init__()
        self.fc = nn.Linear(4, 4)

    def forward(self, x):
        return self.fc(x) + x


class Example(nn.Module):
    def __init__(self):
        super().__init__()
        self.block = Block()
        self.head = nn.Linear(4, 2)

    def forward(self, x):
        return self.head(self.block(x))


INPUTS = [np.linspace(-1.0, 1.0, 8, dtype=np.float32).reshape(2, 4)]
