"""torch.float32 and its alias torch.float as dtypes: tensors made with them are float32 on both sides."""
import numpy as np
import torch
from torch import nn


class Example(nn.Module):
    def __init__(self):
        super().__init__()
        self.layer = nn.Linear(4, 3)

    def forward(self, x):
        h = self.layer(x) + torch.ones(3, dtype=torch.float32)
        return h - torch.full((2, 3), 0.5, dtype=torch.float)


INPUTS = [np.linspace(-1.0, 1.0, 2 * 4, dtype=np.float32).reshape(2, 4)]
