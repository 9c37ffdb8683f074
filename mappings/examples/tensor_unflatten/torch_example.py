"""t.unflatten(dim, sizes): a last dim split into heads (a tuple with -1, as attention code writes it), a middle dim
split with a list, positionally and by keyword."""
import numpy as np
from torch import nn


class Example(nn.Module):
    def __init__(self):
        super().__init__()
        self.layer = nn.Linear(12, 12)

    def forward(self, x):
        h = self.layer(x)                                   # (2, 3, 12)
        heads = h.unflatten(-1, (4, -1))                    # (2, 3, 4, 3)
        rows = h.unflatten(dim=1, sizes=[3, 1])             # (2, 3, 1, 12)
        return heads.sum(-1), rows * 2


INPUTS = [np.linspace(-1.0, 1.0, 2 * 3 * 12, dtype=np.float32).reshape(2, 3, 12)]
