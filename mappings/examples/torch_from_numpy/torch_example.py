"""torch.from_numpy of a float32 array (a constant mixed into a layer's output) and of an int64 array (indices)."""
import numpy as np
import torch
from torch import nn


class Example(nn.Module):
    def __init__(self):
        super().__init__()
        self.fc = nn.Linear(4, 3)

    def forward(self, x):
        scale = torch.from_numpy(np.array([0.5, -1.0, 2.0], dtype=np.float32))
        index = torch.from_numpy(np.array([2, 0], dtype=np.int64))
        return self.fc(x) * scale, index + 1


INPUTS = [np.linspace(-1.0, 1.0, 2 * 4, dtype=np.float32).reshape(2, 4)]
