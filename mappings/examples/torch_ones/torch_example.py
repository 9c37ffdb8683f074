"""torch.ones with sizes as arguments, a shape, and a dtype."""
import numpy as np
import torch
from torch import nn


class Example(nn.Module):
    def __init__(self):
        super().__init__()
        self.layer = nn.Linear(4, 3)

    def forward(self, x):
        h = self.layer(x)
        return h * torch.ones(h.shape) + torch.ones(2, 3), torch.ones(4, dtype=torch.int64)


INPUTS = [np.linspace(-1.0, 1.0, 2 * 4, dtype=np.float32).reshape(2, 4)]
