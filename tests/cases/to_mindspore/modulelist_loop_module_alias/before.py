import torch.nn as nn
import torch.utils.checkpoint as checkpoint


class Encoder(nn.Module):
    def __init__(self):
        super().__init__()
        self.blocks = nn.ModuleList([Block() for _ in range(4)])

    def forward(self, x):
        for blk in self.blocks:
            x = checkpoint.checkpoint(blk, x)
        return x
