"""F.mish: the functional form, on a layer's output."""
import numpy as np
import torch
from torch import nn
import torch.nn.functional as F


class Example(nn.Module):
    def __init__(self):
        super().__init__()
        self.fc = nn.Linear(4, 3)

    def forward(self, x):
        return F.mish(self.fc(x))


INPUTS = [np.linspace(-2.0, 2.0, 8, dtype=np.float32).reshape(2, 4)]
