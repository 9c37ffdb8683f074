"""torch.float16 and its alias torch.half: a float16 output on both sides."""
import numpy as np
import torch
from torch import nn


class Example(nn.Module):
    def __init__(self):
        super().__init__()
        self.layer = nn.Linear(4, 3)

    def forward(self, x):
        half = torch.full((2, 3), 0.25, dtype=torch.float16)
        return self.layer(x), half * torch.ones(2, 3, dtype=torch.half)


INPUTS = [np.linspace(-1.0, 1.0, 2 * 4, dtype=np.float32).reshape(2, 4)]
