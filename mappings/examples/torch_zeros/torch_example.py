"""torch.zeros with sizes as arguments, one size, unpacked sizes, device= and a dtype."""
import numpy as np
import torch
from torch import nn


class Example(nn.Module):
    def __init__(self):
        super().__init__()
        self.layer = nn.Linear(4, 3)

    def forward(self, x):
        h = self.layer(x) + torch.zeros(2, 3) + torch.zeros(3, device=x.device)
        return h, torch.zeros(*h.shape, dtype=torch.int64), torch.zeros((1, 2))


INPUTS = [np.linspace(-1.0, 1.0, 2 * 4, dtype=np.float32).reshape(2, 4)]
