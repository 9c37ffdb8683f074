"""torch.clip: both bounds, one bound, on a layer's output."""
import numpy as np
import torch
from torch import nn


class Example(nn.Module):
    def __init__(self):
        super().__init__()
        self.fc = nn.Linear(4, 3)

    def forward(self, x):
        h = self.fc(x) * 4.0
        return torch.clip(h, -1.0, 1.5) + torch.clip(h, min=0.5)


INPUTS = [np.linspace(-2.0, 2.0, 8, dtype=np.float32).reshape(2, 4)]
