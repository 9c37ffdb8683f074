"""torch.cuda.amp.GradScaler, disabled (the only way it runs alike on a machine without CUDA, where torch disables
an enabled one): positional arguments, which come one place later on recompat.runtime.GradScaler (after device),
reach it by name; the loss passes through with a scale of 1."""
import numpy as np
import torch
from torch import nn


class Example(nn.Module):
    def __init__(self):
        super().__init__()
        self.layer = nn.Linear(4, 3)
        self.scaler = torch.cuda.amp.GradScaler(4.0, 2.0, enabled=False)

    def forward(self, x):
        h = self.layer(x)
        return self.scaler.scale(h) * self.scaler.get_scale() + float(self.scaler.is_enabled())


INPUTS = [np.linspace(-1.0, 1.0, 2 * 4, dtype=np.float32).reshape(2, 4)]
