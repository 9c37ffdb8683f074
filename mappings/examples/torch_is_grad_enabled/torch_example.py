"""torch.is_grad_enabled(), as timm asks it before checkpointing: True where the model runs for a gradient, and
False inside no_grad, each choosing a path of its own."""
import numpy as np
import torch
from torch import nn


class Example(nn.Module):
    def __init__(self):
        super().__init__()
        self.layer = nn.Linear(4, 4)

    def forward(self, x):
        h = self.layer(x)
        with torch.no_grad():
            inside = torch.is_grad_enabled()
        scale = 2.0 if torch.is_grad_enabled() else 5.0
        return h * scale + (7.0 if inside else 3.0)


INPUTS = [np.linspace(-1.0, 1.0, 3 * 4, dtype=np.float32).reshape(3, 4)]
