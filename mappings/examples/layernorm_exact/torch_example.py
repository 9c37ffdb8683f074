"""torch.nn.LayerNorm where MindSpore's nn.LayerNorm cannot take the call: no affine, no bias, two axes, and
elementwise_affine given by a name."""
import numpy as np
import torch
from torch import nn


class Example(nn.Module):
    def __init__(self, affine=True):
        super().__init__()
        self.fc = nn.Linear(4, 6)
        self.plain = nn.LayerNorm(6, elementwise_affine=False)
        self.no_bias = nn.LayerNorm(6, eps=1e-6, bias=False)
        self.two_axes = nn.LayerNorm((2, 6))
        self.named = nn.LayerNorm(6, elementwise_affine=affine)

    def forward(self, x):
        h = self.fc(x).reshape(1, 2, 6)
        return self.plain(h) + self.no_bias(h) * 2.0 + self.two_axes(h) * 3.0 + self.named(h * 0.5)


INPUTS = [np.linspace(-2.0, 2.0, 8, dtype=np.float32).reshape(2, 4)]
