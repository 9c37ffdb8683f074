"""nn.Identity, also with arguments that both sides ignore."""
import numpy as np
from torch import nn


class Example(nn.Module):
    def __init__(self):
        super().__init__()
        self.fc = nn.Linear(4, 3)
        self.skip = nn.Identity()
        self.ignored = nn.Identity(54, unused_argument=0.1)

    def forward(self, x):
        return self.ignored(self.fc(self.skip(x)))


INPUTS = [np.linspace(-1.0, 1.0, 2 * 4, dtype=np.float32).reshape(2, 4)]
