import mindspore as ms
from mindspore import nn


class Net(nn.Cell):
    def construct(self, x):
        return ms.recompute(self.block, x)
