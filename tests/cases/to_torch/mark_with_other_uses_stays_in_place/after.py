from mindspore import nn
import torch.distributed._composable


class Net(nn.Cell):
    def __init__(self):
        super().__init__()
        self.block = nn.Dense(4, 4)
        torch.distributed._composable.checkpoint(self.block)
        self.seq = nn.SequentialCell([self.block, nn.ReLU()])

    def construct(self, x):
        return self.seq(x)
