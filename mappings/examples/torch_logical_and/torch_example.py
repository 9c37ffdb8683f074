"""torch.logical_and of two masks, and of a mask with a float tensor (not 0 is true); the layer's output is
returned as well, so a gradient flows."""
import numpy as np
import torch
from torch import nn


class Example(nn.Module):
    def __init__(self):
        super().__init__()
        self.fc = nn.Linear(4, 4)

    def forward(self, x):
        h = self.fc(x)
        return torch.logical_and(h > 0, x < 1), torch.logical_and(h > 0, x), h


INPUTS = [np.array([[-1.0, 0.0, 0.5, 2.0], [1.0, -0.5, 0.0, 0.25]], dtype=np.float32)]
