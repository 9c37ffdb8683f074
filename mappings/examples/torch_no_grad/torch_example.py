"""torch.no_grad as a context (a layer's output kept out of the gradient) and as a decorator, made and bare."""
import numpy as np
import torch
from torch import nn


@torch.no_grad()
def scaled(x):
    return x * 3.0


@torch.no_grad
def shifted(x):
    return x + 1.0


class Example(nn.Module):
    def __init__(self):
        super().__init__()
        self.fc = nn.Linear(4, 4)
        self.gate = nn.Linear(4, 4)

    def forward(self, x):
        with torch.no_grad():
            g = torch.sigmoid(self.gate(x))
        h = self.fc(x)
        return h * g + scaled(h) * shifted(x) * h


INPUTS = [np.linspace(-1.0, 1.0, 3 * 4, dtype=np.float32).reshape(3, 4)]
