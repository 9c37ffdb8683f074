"""t.transpose swaps two axes; MindSpore's t.swapaxes does in every mode (its t.transpose only in PyNative)."""
import numpy as np
import torch
from torch import nn


class Example(nn.Module):
    def __init__(self):
        super().__init__()
        self.layer = nn.Linear(4, 3)

    def forward(self, x):
        return self.layer(x.transpose(1, 2)) * self.layer(x.transpose(-1, 1))


INPUTS = [np.linspace(-1.0, 1.0, 2 * 4 * 3, dtype=np.float32).reshape(2, 4, 3)]
