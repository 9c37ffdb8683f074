"""Tensor.softmax over the last axis (by keyword, as attention blocks write it) and over the first, on a layer's
output."""
import numpy as np
import torch
from torch import nn


class Example(nn.Module):
    def __init__(self):
        super().__init__()
        self.fc = nn.Linear(4, 3)

    def forward(self, x):
        h = self.fc(x)
        return h.softmax(dim=-1), h.softmax(0)


INPUTS = [np.linspace(-2.0, 2.0, 8, dtype=np.float32).reshape(2, 4)]
