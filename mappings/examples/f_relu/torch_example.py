"""F.relu, with inplace=True (dropped: MindSpore has no in-place ReLU on CPU; the same result)."""
import numpy as np
import torch
import torch.nn.functional as F
from torch import nn


class Example(nn.Module):
    def __init__(self):
        super().__init__()
        self.layer = nn.Linear(4, 3)

    def forward(self, x):
        return F.relu(self.layer(F.relu(x)), inplace=True)


INPUTS = [np.linspace(-1.0, 1.0, 2 * 4, dtype=np.float32).reshape(2, 4)]
