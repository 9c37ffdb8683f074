"""F.silu: ops.silu (inplace has no counterpart)."""
import numpy as np
import torch
import torch.nn.functional as F
from torch import nn


class Example(nn.Module):
    def __init__(self):
        super().__init__()
        self.layer = nn.Linear(4, 3)

    def forward(self, x):
        return F.silu(self.layer(x))


INPUTS = [np.linspace(-3.0, 3.0, 2 * 4, dtype=np.float32).reshape(2, 4)]
