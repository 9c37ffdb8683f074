"""F.layer_norm with a LayerNorm's weight and bias and eps 1e-3, and without them over the last two axes
(MONAI's SwinUNETR normalises its outputs so)."""
import numpy as np
import torch
import torch.nn.functional as F
from torch import nn


class Example(nn.Module):
    def __init__(self):
        super().__init__()
        self.norm = nn.LayerNorm(4)

    def forward(self, x):
        return F.layer_norm(x, (4,), self.norm.weight, self.norm.bias, 1e-3), F.layer_norm(x * 3.0, [3, 4])


INPUTS = [np.linspace(-2.0, 3.0, 2 * 3 * 4, dtype=np.float32).reshape(2, 3, 4)]
