from mindspore import recompute
from mindspore import nn


class Net(nn.Cell):
    def construct(self, x):
        return recompute(self.block, x)
