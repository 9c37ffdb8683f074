"""t.type_as(other): to a float dtype (a half tensor's, as rotary-embedding code does), and to an integer one whose
result scales a float: torch's gradient stops at the integer cast, so only the plain path carries it."""
import numpy as np
import torch
from torch import nn


class Example(nn.Module):
    def __init__(self):
        super().__init__()
        self.layer = nn.Linear(4, 4)

    def forward(self, x):
        h = self.layer(x)
        counts = (h * 4).type_as(torch.arange(3))               # int64: no gradient through it
        same = h.type_as(x)                                     # already float32: h itself
        return h * counts, same.type_as(torch.zeros(1, dtype=torch.float64)) * 2


INPUTS = [np.linspace(-1.0, 1.0, 3 * 4, dtype=np.float32).reshape(3, 4)]
