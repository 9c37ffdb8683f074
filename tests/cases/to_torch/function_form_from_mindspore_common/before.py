from mindspore import nn
from mindspore.common.recompute import recompute


class Net(nn.Cell):
    def __init__(self):
        super().__init__()
        self.block = nn.Dense(4, 4)

    def construct(self, x):
        return recompute(self.block, x)
