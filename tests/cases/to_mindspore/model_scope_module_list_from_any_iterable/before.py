import torch
from torch import nn


class Stack(nn.Module):
    def __init__(self, dim, depth, extra):
        super().__init__()
        self.blocks = nn.ModuleList(nn.Linear(dim, dim) for _ in range(depth))
        self.norms = nn.ModuleList((nn.LayerNorm(dim) for _ in range(depth)))
        self.extra = nn.ModuleList(extra)
        self.pair = nn.ModuleList((nn.Linear(dim, dim), nn.ReLU()))
        self.listed = nn.ModuleList([nn.Linear(dim, dim) for _ in range(depth)])

    def forward(self, x):
        for block, norm in zip(self.blocks, self.norms):
            x = norm(block(x))
        return x
