"""F.softmax on a 3-D tensor along dim 1 (MindSpore's default axis is -1, so dim must reach axis)."""
import numpy as np
import torch
import torch.nn.functional as F
from torch import nn


class Example(nn.Module):
    def __init__(self):
        super().__init__()
        self.layer = nn.Linear(4, 4)

    def forward(self, x):
        h = self.layer(x)
        return F.softmax(h, 1) * F.softmax(h, dim=-1)


INPUTS = [np.linspace(-2.0, 2.0, 2 * 3 * 4, dtype=np.float32).reshape(2, 3, 4)]
