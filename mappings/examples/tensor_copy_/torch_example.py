"""t.copy_(src): src's values written into a tensor the model made, broadcast and cast to its dtype."""
import numpy as np
import torch
from torch import nn


class Example(nn.Module):
    def __init__(self):
        super().__init__()
        self.layer = nn.Linear(4, 4)
        self.head = nn.Linear(4, 3)

    def forward(self, x):
        h = self.layer(x)
        into = torch.zeros_like(h)
        into.copy_(h * 2)                        # the values, and the gradient back to h
        row = torch.zeros_like(h)
        row.copy_(h[:1])                         # broadcast along the first axis
        return self.head(into + row)


INPUTS = [np.linspace(-1.0, 1.0, 2 * 3 * 4, dtype=np.float32).reshape(2, 3, 4)]
