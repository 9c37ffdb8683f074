"""torch.save of a layer's state dict, read back by torch.load into another layer, which then computes: the values
(LayerNorm's weight and bias, renamed on MindSpore) go through the file."""
import os
import tempfile

import numpy as np
import torch
from torch import nn


class Example(nn.Module):
    def __init__(self):
        super().__init__()
        self.norm = nn.LayerNorm(4)
        self.other = nn.LayerNorm(4)
        self.path = os.path.join(tempfile.mkdtemp(), "norm.pt")

    def forward(self, x):
        with torch.no_grad():
            self.norm.weight.mul_(1.5)
        torch.save(self.norm.state_dict(), self.path)
        self.other.load_state_dict(torch.load(self.path))
        return self.other(x) + self.norm(x)


INPUTS = [np.linspace(-1.0, 1.0, 2 * 4, dtype=np.float32).reshape(2, 4)]
