import mindspore
from mindspore import nn
from recompat.runtime import torch_signature


class Block(nn.Cell):
    def __init__(self, dim, device=None, dtype=None, **kwargs):
        super().__init__(**kwargs)
        dd = {'device': device, 'dtype': dtype}
        # keywords from a dict: the layer's torch arguments are translated when it is made
        self.conv = torch_signature(nn.Conv2d, 'torch.nn.Conv2d')(dim, dim, 3, padding=1, bias=False, **dd)
        self.proj = nn.Dense(dim, dim)      # torch's None: the default, MindSpore's float32
        self.head = nn.Dense(dim, 2, dtype=dtype)       # None at run time would be refused
        self.half = nn.Dense(dim, 2, dtype=mindspore.float16)

    def construct(self, x):
        return self.head(self.proj(self.conv(x)))
