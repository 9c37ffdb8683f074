"""t.argmax over the flattened tensor and one axis (positional, keyword, keepdim); the indices scale a float tensor."""
import numpy as np
from torch import nn


class Example(nn.Module):
    def __init__(self):
        super().__init__()
        self.layer = nn.Linear(4, 4)

    def forward(self, x):
        h = self.layer(x)
        return h * h.argmax(1, True), h * h.argmax(dim=-1, keepdim=True), h + h.argmax(), h[0] * h.argmax(-1)[0].unsqueeze(-1)


INPUTS = [np.linspace(-1.0, 1.0, 2 * 3 * 4, dtype=np.float32).reshape(2, 3, 4)]
