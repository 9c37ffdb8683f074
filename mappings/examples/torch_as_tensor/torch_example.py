"""torch.as_tensor from a NumPy array (its dtype kept), from a list with a dtype, and of a tensor (the tensor itself:
its gradient flows)."""
import numpy as np
import torch
from torch import nn


class Example(nn.Module):
    def __init__(self):
        super().__init__()
        self.layer = nn.Linear(4, 3)

    def forward(self, x):
        h = self.layer(x) * torch.as_tensor(np.array([1.0, 2.0, 4.0], dtype=np.float32))
        return torch.as_tensor(h) + torch.as_tensor([1, 2, 3], dtype=torch.float32)


INPUTS = [np.linspace(-1.0, 1.0, 2 * 4, dtype=np.float32).reshape(2, 4)]
