"""nn.Linear: in_features / out_features / bias become in_channels / out_channels / has_bias; the same weight layout."""
import numpy as np
from torch import nn


class Example(nn.Module):
    def __init__(self):
        super().__init__()
        self.layer = nn.Linear(4, 3)
        self.plain = nn.Linear(in_features=3, out_features=2, bias=False)

    def forward(self, x):
        return self.plain(self.layer(x))


INPUTS = [np.linspace(-1.0, 1.0, 8, dtype=np.float32).reshape(2, 4)]
