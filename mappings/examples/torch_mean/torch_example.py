"""torch.mean over one axis with keepdim, over all elements and over a tuple of axes (renamed: axis, keep_dims)."""
import numpy as np
import torch
from torch import nn


class Example(nn.Module):
    def __init__(self):
        super().__init__()
        self.layer = nn.Linear(4, 4)

    def forward(self, x):
        h = self.layer(x)
        return torch.mean(h, 1, True) + torch.mean(h) + torch.mean(h, dim=(0, 1), keepdim=False)


INPUTS = [np.linspace(-1.0, 1.0, 2 * 3 * 4, dtype=np.float32).reshape(2, 3, 4)]
