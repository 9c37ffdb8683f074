"""torch.cat along dim 1 and torch.concat with the default dim 0."""
import numpy as np
import torch
from torch import nn


class Example(nn.Module):
    def __init__(self):
        super().__init__()
        self.layer = nn.Linear(4, 3)

    def forward(self, x):
        y = torch.cat([x, self.layer(x)], dim=1)
        return torch.concat((y, 2 * y))


INPUTS = [np.linspace(-1.0, 1.0, 2 * 4, dtype=np.float32).reshape(2, 4)]
