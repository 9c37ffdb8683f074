from mindspore import nn


class Net(nn.Cell):
    def __init__(self):
        super().__init__()
        self.block = nn.Dense(4, 4)
        self.block.recompute()
        self.seq = nn.SequentialCell([self.block, nn.ReLU()])

    def construct(self, x):
        return self.seq(x)
