import torch
from torch import nn


class Block(nn.Module):
    def __init__(self, dim, device=None, dtype=None, **kwargs):
        super().__init__(**kwargs)
        dd = {'device': device, 'dtype': dtype}
        # keywords from a dict: the layer's torch arguments are translated when it is made
        self.conv = nn.Conv2d(dim, dim, 3, padding=1, bias=False, **dd)
        self.proj = nn.Linear(dim, dim, dtype=None)      # torch's None: the default, MindSpore's float32
        self.head = nn.Linear(dim, 2, dtype=dtype)       # None or a dtype: seen when it is made
        self.half = nn.Linear(dim, 2, dtype=torch.float16)
        self.token = nn.Parameter(torch.zeros(1, dim, **dd))   # a function, called as __init__ runs

    def forward(self, x):
        # what construct calls is compiled in GRAPH mode: the keywords pass through, with a warning
        return self.head(self.proj(self.conv(x))) + torch.zeros(2, **self.options)
