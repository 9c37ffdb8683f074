"""nn.Softmax over dim 1 (positional) and dim=-1 on 3-D input, the same parameter on both sides."""
import numpy as np
from torch import nn


class Example(nn.Module):
    def __init__(self):
        super().__init__()
        self.middle = nn.Softmax(1)
        self.last = nn.Softmax(dim=-1)

    def forward(self, x):
        return self.middle(x), self.last(x)


INPUTS = [np.sin(np.arange(2 * 3 * 4, dtype=np.float32)).reshape(2, 3, 4) * 2.0]
