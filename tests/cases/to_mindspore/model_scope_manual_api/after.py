from torch import nn
import mindspore


class Net(mindspore.nn.Cell):
    def __init__(self):
        super().__init__()
        self.fc = mindspore.nn.Dense(4, 4)
        # recompat: RC301 torch.nn.MultiheadAttention is outside the core API set recompat translates: left as it is; port it by hand
        self.attn = nn.MultiheadAttention(4, 2)
        # recompat: RC309 torch.nn.Conv2d: padding= has no counterpart (padding_mode='reflect': MindSpore's convolutions pad with zeros only): the call is left as it is
        self.pad = nn.Conv2d(3, 8, 3, padding_mode='reflect')

    def construct(self, x):
        return self.attn(self.fc(x), x, x)[0]
