import torch
from torch import nn


class Net(nn.Module):
    def __init__(self):
        super().__init__()
        self.fc = nn.Linear(4, 4)
        self.attn = nn.MultiheadAttention(4, 2)
        self.pad = nn.Conv2d(3, 8, 3, padding_mode='reflect')

    def forward(self, x):
        return self.attn(self.fc(x), x, x)[0]
