"""torch.roll as Swin's shifted windows use it (two axes, negative shifts, then back), and over the flattened
tensor, on a layer's output."""
import numpy as np
import torch
from torch import nn


class Example(nn.Module):
    def __init__(self):
        super().__init__()
        self.fc = nn.Linear(4, 4)

    def forward(self, x):
        h = self.fc(x)
        shifted = torch.roll(h, shifts=(-1, -2), dims=(1, 2))
        return torch.roll(shifted * h, shifts=(1, 2), dims=(1, 2)), torch.roll(h, 3)


INPUTS = [np.linspace(-1.0, 1.0, 2 * 3 * 4, dtype=np.float32).reshape(2, 3, 4)]
