"""torch.optim.SGD with momentum, dampening, Nesterov off and L2 weight decay, a BatchNorm's running statistics trained too: mindspore.experimental.optim.SGD."""
from mindspore import nn


class Example(nn.Cell):
    def __init__(self):
        super().__init__()
        self.hidden = nn.Dense(8, 32)
        self.norm = nn.BatchNorm1d(32, momentum=0.9)
        self.relu = nn.ReLU()
        self.out = nn.Dense(32, 4)

    def construct(self, x):
        return self.out(self.relu(self.norm(self.hidden(x))))
