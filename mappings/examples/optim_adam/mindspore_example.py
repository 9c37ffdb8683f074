"""torch.optim.Adam: mindspore.experimental.optim.AdamW with weight_decay=0 (MindSpore's Adam adds eps before the bias correction)."""
from mindspore import nn


class Example(nn.Cell):
    def __init__(self):
        super().__init__()
        self.hidden = nn.Dense(8, 32)
        self.tanh = nn.Tanh()
        self.out = nn.Dense(32, 4)

    def construct(self, x):
        return self.out(self.tanh(self.hidden(x)))
