"""nn.AdaptiveMaxPool2d to a size that does not divide the input, keeping one axis (None), and with the indices."""
import numpy as np
from torch import nn


class Example(nn.Module):
    def __init__(self):
        super().__init__()
        self.grid = nn.AdaptiveMaxPool2d((3, 4))
        self.keep = nn.AdaptiveMaxPool2d((None, 4))
        self.indexed = nn.AdaptiveMaxPool2d(2, return_indices=True)

    def forward(self, x):
        values, indices = self.indexed(x)
        return self.grid(x), self.keep(x), values, indices


INPUTS = [np.sin(np.arange(2 * 3 * 7 * 9, dtype=np.float32) * 0.37).reshape(2, 3, 7, 9)]
