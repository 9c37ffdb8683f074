"""torch.nn.MSELoss: mindspore.nn.MSELoss."""
from mindspore import nn


class Example(nn.Cell):
    def __init__(self):
        super().__init__()
        self.hidden = nn.Dense(8, 32)
        self.tanh = nn.Tanh()
        self.out = nn.Dense(32, 4)

    def construct(self, x):
        return self.out(self.tanh(self.hidden(x)))
