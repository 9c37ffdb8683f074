"""t.scatter out of place: src along dim 1 and dim 0, by keyword, and a float value into zeros (a one-hot)."""
import numpy as np
import torch
from torch import nn


class Example(nn.Module):
    def __init__(self):
        super().__init__()
        self.layer = nn.Linear(5, 5)
        self.src = nn.Linear(5, 2)

    def forward(self, x):
        h = self.layer(x)
        s = self.src(x)
        cols = torch.tensor([[4, 1], [0, 3], [2, 1]])
        rows = torch.tensor([[2, 0, 1, 0, 2]])
        onehot = torch.zeros(3, 5).scatter(1, torch.tensor([[1], [4], [0]]), 1.0)
        return h.scatter(1, cols, s), h.scatter(0, rows, s[:1].sum(1, keepdim=True).expand(1, 5)), \
            h.scatter(dim=-1, index=cols, src=s), h * onehot


INPUTS = [np.linspace(-1.0, 1.0, 3 * 5, dtype=np.float32).reshape(3, 5)]
