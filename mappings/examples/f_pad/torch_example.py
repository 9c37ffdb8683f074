"""F.pad: constant with a value, and replicate and reflect on the last two axes."""
import numpy as np
import torch
from torch import nn
import torch.nn.functional as F


class Example(nn.Module):
    def __init__(self):
        super().__init__()
        self.conv = nn.Conv2d(1, 2, 3)

    def forward(self, x):
        h = self.conv(F.pad(x, (1, 1, 1, 1), mode="replicate"))
        h = F.pad(h, (0, 1, 2, 0), "reflect")
        return F.pad(h, [1, 0], value=-1.5)


INPUTS = [np.sin(np.arange(2 * 1 * 5 * 5, dtype=np.float32)).reshape(2, 1, 5, 5)]
