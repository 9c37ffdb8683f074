"""Tensor.dtype: a tensor made with another's dtype, and a dtype compared with a framework's."""
import numpy as np
import torch
from torch import nn


class Example(nn.Module):
    def __init__(self):
        super().__init__()
        self.fc = nn.Linear(4, 3)

    def forward(self, x):
        h = self.fc(x)
        scale = 2.0 if h.dtype == torch.float32 else 3.0
        return h * torch.full((3,), scale, dtype=h.dtype)


INPUTS = [np.linspace(-2.0, 2.0, 8, dtype=np.float32).reshape(2, 4)]
