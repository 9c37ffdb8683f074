"""self.register_buffer: a persistent buffer used in forward and a non-persistent one."""
import numpy as np
import torch
from torch import nn


class Example(nn.Module):
    def __init__(self):
        super().__init__()
        self.layer = nn.Linear(4, 3)
        self.register_buffer("scale", torch.tensor([2.0, 3.0, 4.0]))
        self.register_buffer("shift", torch.tensor([0.5, 0.5, 0.5]), persistent=False)

    def forward(self, x):
        return self.layer(x) * self.scale + self.shift


INPUTS = [np.linspace(-1.0, 1.0, 2 * 4, dtype=np.float32).reshape(2, 4)]
