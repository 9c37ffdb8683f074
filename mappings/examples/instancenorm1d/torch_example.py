"""nn.InstanceNorm1d, plain and affine, on (N, C, L): a GroupNorm of one channel per group."""
import numpy as np
import torch
from torch import nn


class Example(nn.Module):
    def __init__(self):
        super().__init__()
        self.conv = nn.Conv1d(2, 3, 3, padding=1)
        self.plain = nn.InstanceNorm1d(3)
        self.affine = nn.InstanceNorm1d(3, affine=True, eps=1e-3)

    def forward(self, x):
        h = self.conv(x)
        return self.plain(h) * 2 + self.affine(h)


INPUTS = [np.sin(np.arange(2 * 2 * 6, dtype=np.float32)).reshape(2, 2, 6) * 3 + 1]
TRAINING = True
