"""nn.Dropout in train mode with p=0 given positionally: MindSpore needs p=0.0 as a keyword (its first parameter is
keep_prob, which refuses 0)."""
import numpy as np
from torch import nn


class Example(nn.Module):
    def __init__(self):
        super().__init__()
        self.drop = nn.Dropout(0.0)
        self.fc = nn.Linear(4, 3)
        self.after = nn.Dropout(p=0.0, inplace=True)

    def forward(self, x):
        return self.after(self.fc(self.drop(x)))


INPUTS = [np.linspace(-1.0, 1.0, 5 * 4, dtype=np.float32).reshape(5, 4)]
TRAINING = True
