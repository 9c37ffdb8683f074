"""torch.finfo: attention scores masked with the dtype's lowest value, and a floor of eps (x-transformers, vit-pytorch)."""
import numpy as np
import torch
from torch import nn


class Example(nn.Module):
    def __init__(self):
        super().__init__()
        self.proj = nn.Linear(4, 4)

    def forward(self, x):
        scores = self.proj(x)
        masked = scores.masked_fill(x > 0.5, -torch.finfo(scores.dtype).max).softmax(dim=-1)
        return masked, scores.abs() + torch.finfo().eps


INPUTS = [np.linspace(-1.0, 1.0, 3 * 4, dtype=np.float32).reshape(3, 4)]
