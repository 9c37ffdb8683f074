"""torch.full with a float fill (float32 in torch: MindSpore needs the dtype written), an int fill (int64) and a bool fill (bool)."""
import numpy as np
import torch
from torch import nn


class Example(nn.Module):
    def __init__(self):
        super().__init__()
        self.layer = nn.Linear(4, 3)

    def forward(self, x):
        h = self.layer(x) * torch.full((2, 3), -1.5)
        return h, torch.full((3,), 2), torch.full((2,), True)


INPUTS = [np.linspace(-1.0, 1.0, 2 * 4, dtype=np.float32).reshape(2, 4)]
