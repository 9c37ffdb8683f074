"""torch.argmax over the flattened tensor, along the last axis (with a tie: the first index), and with keepdim; the
layer's output is returned as well, so a gradient flows."""
import numpy as np
import torch
from torch import nn


class Example(nn.Module):
    def __init__(self):
        super().__init__()
        self.fc = nn.Linear(4, 3)

    def forward(self, x):
        h = self.fc(x)
        return torch.argmax(x), torch.argmax(x, -1), torch.argmax(h, dim=0, keepdim=True), h


INPUTS = [np.array([[0.5, 2.0, 2.0, -1.0], [3.0, -2.0, 0.0, 1.5]], dtype=np.float32)]
