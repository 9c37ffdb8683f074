import torch.nn as nn
import mindspore


class Encoder(nn.Module):
    def __init__(self):
        super().__init__()
        self.blocks = nn.ModuleList([Block() for _ in range(4)])

    def forward(self, x):
        for blk in self.blocks:
            x = mindspore.recompute(blk, x)
        return x
