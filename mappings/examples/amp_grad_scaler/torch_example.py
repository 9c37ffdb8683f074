"""torch.amp.GradScaler on CPU: a loss (and a list of them) scaled by init_scale, the scale read back; a disabled
one passes its input through with a scale of 1. The step's methods (unscale_, step skipped on inf, update) are
pinned against torch's in tests/test_grads.py."""
import numpy as np
import torch
from torch import nn


class Example(nn.Module):
    def __init__(self):
        super().__init__()
        self.layer = nn.Linear(4, 3)
        self.scaler = torch.amp.GradScaler("cpu", init_scale=8.0, growth_interval=3)
        self.off = torch.amp.GradScaler("cpu", 1024.0, enabled=False)

    def forward(self, x):
        h = self.layer(x)
        pair = self.scaler.scale([h, h * 2])
        scaled = self.scaler.scale(h) + pair[1] * self.scaler.get_scale()
        return scaled, self.off.scale(h) * self.off.get_scale()


INPUTS = [np.linspace(-1.0, 1.0, 2 * 4, dtype=np.float32).reshape(2, 4)]
