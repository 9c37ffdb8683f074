"""torch.meshgrid with 'ij' given (MONAI's meshgrid_ij), with 'xy', and left out (torch's default, 'ij'), on a
layer's outputs, so gradients flow back through the grids."""
import numpy as np
import torch
from torch import nn


class Example(nn.Module):
    def __init__(self):
        super().__init__()
        self.fc = nn.Linear(4, 3)

    def forward(self, x):
        h = self.fc(x)
        a, b = torch.meshgrid(h[0], x[1], indexing="ij")
        c, d = torch.meshgrid(h[0], x[1], indexing="xy")
        e, f = torch.meshgrid(x[0], h[1])
        return a * b, c - d, e * f


INPUTS = [np.linspace(-2.0, 2.0, 8, dtype=np.float32).reshape(2, 4)]
