"""F.softplus: at its defaults and with beta and threshold given, on a layer's output (large values pass x)."""
import numpy as np
import torch
from torch import nn
import torch.nn.functional as F


class Example(nn.Module):
    def __init__(self):
        super().__init__()
        self.fc = nn.Linear(4, 3)

    def forward(self, x):
        h = self.fc(x) * 8.0
        return F.softplus(h) + F.softplus(h, beta=2.0, threshold=5.0)


INPUTS = [np.linspace(-3.0, 3.0, 8, dtype=np.float32).reshape(2, 4)]
