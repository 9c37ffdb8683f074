"""F.normalize: the default L2 over dim 1, p=1 over the last axis, and a row of zeros (its norm below eps: the
gradient passes no further, on both sides)."""
import numpy as np
import torch.nn.functional as F
from torch import nn


class Example(nn.Module):
    def __init__(self):
        super().__init__()
        self.proj = nn.Linear(4, 4)

    def forward(self, x):
        y = self.proj(x)
        return F.normalize(y), F.normalize(y, p=1.0, dim=-1), F.normalize(x * (x > 0.5), dim=1, eps=1e-6)


INPUTS = [np.linspace(-1.0, 1.0, 3 * 4, dtype=np.float32).reshape(3, 4)]
