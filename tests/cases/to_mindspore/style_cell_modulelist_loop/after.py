import torch.nn as nn
import mindspore


class Net(nn.Module):
    def __init__(self):
        super().__init__()
        self.blocks = nn.ModuleList([nn.Linear(8, 8) for _ in range(3)])
        self.norm = nn.LayerNorm(8)
        self.norm.recompute(use_reentrant=False, early_stop=False)

    def forward(self, x):
        for blk in self.blocks:
            x = mindspore.recompute(blk, x, use_reentrant=False, early_stop=False)
        x = self.norm(x)
        return x
