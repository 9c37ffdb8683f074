import mindspore
from mindspore import nn, ops
from recompat.runtime import torch_signature


class Block(nn.Cell):
    def __init__(self, dim, device=None, dtype=None, **kwargs):
        super().__init__(**kwargs)
        dd = {'device': device, 'dtype': dtype}
        # keywords from a dict: the layer's torch arguments are translated when it is made
        self.conv = torch_signature(nn.Conv2d, 'torch.nn.Conv2d')(dim, dim, 3, padding=1, bias=False, **dd)
        self.proj = nn.Dense(dim, dim)      # torch's None: the default, MindSpore's float32
        self.head = torch_signature(nn.Dense, 'torch.nn.Linear')(dim, 2, dtype=dtype)       # None or a dtype: seen when it is made
        self.half = nn.Dense(dim, 2, dtype=mindspore.float16)
        self.token = mindspore.Parameter(torch_signature(ops.zeros, 'torch.zeros')(1, dim, **dd))   # a function, called as __init__ runs

    def construct(self, x):
        # what construct calls is compiled in GRAPH mode: the keywords pass through, with a warning
        return self.head(self.proj(self.conv(x))) + ops.zeros(2, **self.options)
