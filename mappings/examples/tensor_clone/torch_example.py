"""Tensor.clone of a layer's output, written into afterwards (the original kept), gradients flowing through both."""
import numpy as np
import torch
from torch import nn


class Example(nn.Module):
    def __init__(self):
        super().__init__()
        self.fc = nn.Linear(4, 3)

    def forward(self, x):
        h = self.fc(x)
        c = h.clone()
        c[0] = 0.0
        return h * c, h.clone(memory_format=torch.preserve_format)


INPUTS = [np.linspace(-1.0, 1.0, 2 * 4, dtype=np.float32).reshape(2, 4)]
