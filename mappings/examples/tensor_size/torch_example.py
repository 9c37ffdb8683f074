"""t.size(0), t.size(-1) and t.size(): t.shape[0], t.shape[-1] and t.shape in MindSpore."""
import numpy as np
import torch
from torch import nn


class Example(nn.Module):
    def __init__(self):
        super().__init__()
        self.layer = nn.Linear(12, 3)

    def forward(self, x):
        s = x.size()
        return self.layer(x.reshape(x.size(0), -1)) * x.size(-1) + s[1]


INPUTS = [np.linspace(-1.0, 1.0, 2 * 3 * 4, dtype=np.float32).reshape(2, 3, 4)]
