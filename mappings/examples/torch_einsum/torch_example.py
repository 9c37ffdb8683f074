"""torch.einsum as attention blocks write it (scores, then the weighted values), an outer product of two vectors
given as one list, and an implicit output with '...', on a layer's output."""
import numpy as np
import torch
from torch import nn


class Example(nn.Module):
    def __init__(self):
        super().__init__()
        self.qkv = nn.Linear(4, 12)

    def forward(self, x):
        q, k, v = self.qkv(x).reshape(2, 3, 3, 4).permute(2, 0, 1, 3).unsqueeze(2)
        scores = torch.einsum("blxd,blyd->blxy", q, k).softmax(-1)
        out = torch.einsum("bhxy,bhyd->bhxd", scores, v)
        outer = torch.einsum("m,d->md", [x[0, 0], x[1, 1]])
        return out, outer, torch.einsum("...ij,...jk", q, k.transpose(-1, -2))


INPUTS = [np.linspace(-1.0, 1.0, 24, dtype=np.float32).reshape(2, 3, 4)]
