"""nn.ConstantPad1d with an int padding and a float value, and with a (left, right) tuple and an int value, after a
linear layer on the last axis: the same class and arguments in MindSpore."""
import numpy as np
from torch import nn


class Example(nn.Module):
    def __init__(self):
        super().__init__()
        self.fc = nn.Linear(6, 6)
        self.both = nn.ConstantPad1d(2, 0.5)
        self.uneven = nn.ConstantPad1d((1, 3), value=-1)

    def forward(self, x):
        return self.uneven(self.both(self.fc(x)))


INPUTS = [np.sin(np.arange(2 * 3 * 6, dtype=np.float32)).reshape(2, 3, 6)]
