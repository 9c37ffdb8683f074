"""t.squeeze of every size-1 axis, one axis (positive, negative, keyword), a tuple of axes, and an axis of size 2."""
import numpy as np
from torch import nn


class Example(nn.Module):
    def __init__(self):
        super().__init__()
        self.layer = nn.Linear(4, 4)

    def forward(self, x):
        h = self.layer(x)
        g = h.unsqueeze(1).unsqueeze(-1)
        return g.squeeze(), g.squeeze(1), g.squeeze(-1), g.squeeze(dim=1), g.squeeze((1, 4)), g.squeeze(0)


INPUTS = [np.linspace(-1.0, 1.0, 2 * 3 * 4, dtype=np.float32).reshape(2, 3, 4)]
