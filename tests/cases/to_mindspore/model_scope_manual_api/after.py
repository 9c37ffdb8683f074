from torch import nn
import mindspore


class Net(mindspore.nn.Cell):
    def __init__(self):
        super().__init__()
        self.fc = mindspore.nn.Dense(4, 4)
        self.attn = nn.MultiheadAttention(4, 2)
        self.pad = nn.Conv2d(3, 8, 3, padding_mode='reflect')

    def construct(self, x):
        return self.attn(self.fc(x), x, x)[0]
