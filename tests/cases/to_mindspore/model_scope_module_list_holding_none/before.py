import torch
from torch import nn


class Net(nn.Module):
    def __init__(self, n=3, skip=(1,)):
        super().__init__()
        self.blocks = nn.ModuleList([nn.Linear(4, 4) if i not in skip else None for i in range(n)])
        self.heads = nn.ModuleList([nn.Linear(4, 2), None])
        self.norms = nn.ModuleList([nn.LayerNorm(4) for _ in range(n)])

    def forward(self, x):
        for block, norm in zip(self.blocks, self.norms):
            if block is not None:
                x = block(norm(x))
        return self.heads[0](x)
