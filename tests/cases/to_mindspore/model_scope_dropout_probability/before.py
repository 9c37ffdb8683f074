import torch
from torch import nn


class Net(nn.Module):
    def __init__(self):
        super().__init__()
        self.a = nn.Dropout(0.1)
        self.b = nn.Dropout(p=0.3)
        self.c = nn.Dropout()

    def forward(self, x):
        return self.c(self.b(self.a(x)))
