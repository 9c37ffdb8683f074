"""torch.arange counting from 0 (int64), with float bounds (float32), and with a step and a dtype."""
import numpy as np
import torch
from torch import nn


class Example(nn.Module):
    def __init__(self):
        super().__init__()
        self.layer = nn.Linear(4, 3)

    def forward(self, x):
        h = self.layer(x) * torch.arange(0.0, 1.5, 0.5)
        return h + torch.arange(1, 7, 2, dtype=torch.float32), torch.arange(3)


INPUTS = [np.linspace(-1.0, 1.0, 2 * 4, dtype=np.float32).reshape(2, 4)]
