"""t.to with a dtype (by position and keyword), another tensor, a device and both; and a round trip through an
integer dtype, where torch's gradient stops (MindSpore's astype would pass it)."""
import numpy as np
import torch
from torch import nn


class Example(nn.Module):
    def __init__(self):
        super().__init__()
        self.layer = nn.Linear(4, 4)
        self.head = nn.Linear(4, 3)

    def forward(self, x):
        h = self.layer(x)
        wide = h.to(torch.float64).to(dtype=h.dtype)          # a round trip through float64
        same = h.to(x) + h.to(x.device) + h.to(device=x.device, dtype=torch.float32)
        steps = (h * 4).to(torch.int64).to(torch.float32)     # no gradient through the integer cast
        return self.head(wide * same + h * steps)


INPUTS = [np.linspace(-2.0, 2.0, 2 * 3 * 4, dtype=np.float32).reshape(2, 3, 4)]
