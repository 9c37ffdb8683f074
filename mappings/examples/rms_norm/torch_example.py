"""nn.RMSNorm over the last dim (eps left out: the dtype's machine epsilon), over the last two with eps given, and
without a weight, after a Linear; the weights are set away from ones so that the weight's gradient shows."""
import numpy as np
import torch
from torch import nn


class Example(nn.Module):
    def __init__(self):
        super().__init__()
        self.layer = nn.Linear(4, 4)
        self.norm = nn.RMSNorm(4)
        self.norm2 = nn.RMSNorm([3, 4], eps=1e-3)
        self.plain = nn.RMSNorm(4, elementwise_affine=False)
        with torch.no_grad():
            self.norm.weight.copy_(torch.linspace(0.5, 1.5, 4))
            self.norm2.weight.copy_(torch.linspace(1.5, 0.5, 12).reshape(3, 4))

    def forward(self, x):
        h = self.layer(x)
        return self.norm(h), self.norm2(h) * 2, self.plain(h * 3)


INPUTS = [np.linspace(-1.0, 1.0, 2 * 3 * 4, dtype=np.float32).reshape(2, 3, 4)]
