import torch
from torch import nn


class Net(nn.Module):
    def __init__(self):
        super().__init__()
        self.fc = nn.Linear(4, 4)

    def forward(self, x):
        batch, width = x.shape
        h = self.fc(x)
        if h.grad_fn is not None and x.ndim == 2:
            h = h * 2
        return h.T


def describe(entries):
    return [e.name for e in entries]
