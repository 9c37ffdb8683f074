import torch
from torch import nn


class Block(nn.Module):
    def __init__(self, dim, device=None, dtype=None, **kwargs):
        super().__init__(**kwargs)
        dd = {'device': device, 'dtype': dtype}
        # keywords from a dict: the layer's torch arguments are translated when it is made
        self.conv = nn.Conv2d(dim, dim, 3, padding=1, bias=False, **dd)
        self.proj = nn.Linear(dim, dim, dtype=None)      # torch's None: the default, MindSpore's float32
        self.head = nn.Linear(dim, 2, dtype=dtype)       # None at run time would be refused
        self.half = nn.Linear(dim, 2, dtype=torch.float16)

    def forward(self, x):
        return self.head(self.proj(self.conv(x)))
