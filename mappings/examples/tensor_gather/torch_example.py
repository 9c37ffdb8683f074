"""t.gather along the last axis and by keyword, indices from argmax."""
import numpy as np
from torch import nn


class Example(nn.Module):
    def __init__(self):
        super().__init__()
        self.layer = nn.Linear(4, 4)

    def forward(self, x):
        h = self.layer(x)
        i = h.argmax(-1, keepdim=True)
        return h.gather(-1, i), h.gather(dim=2, index=i), h.gather(1, h.argmax(1, keepdim=True))


INPUTS = [np.linspace(-1.0, 1.0, 2 * 3 * 4, dtype=np.float32).reshape(2, 3, 4)]
