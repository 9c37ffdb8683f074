"""torch.transpose swaps two axes: ops.swapaxes (MindSpore's ops.transpose is a permutation)."""
import numpy as np
import torch
from torch import nn


class Example(nn.Module):
    def __init__(self):
        super().__init__()
        self.layer = nn.Linear(4, 3)

    def forward(self, x):
        return self.layer(torch.transpose(x, 1, 2))


INPUTS = [np.linspace(-1.0, 1.0, 2 * 4 * 3, dtype=np.float32).reshape(2, 4, 3)]
