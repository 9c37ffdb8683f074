import torch
from torch.backends import cudnn
from mindspore import nn


def configure(fast):
    # recompat: RC301 torch.backends.cudnn.benchmark is outside the core API set recompat translates: left as it is; port it by hand
    cudnn.benchmark = fast
    # recompat: RC301 torch.backends.cuda.matmul.allow_tf32 is outside the core API set recompat translates: left as it is; port it by hand
    torch.backends.cuda.matmul.allow_tf32 = fast


class Net(nn.Cell):
    def __init__(self):
        super().__init__()
        self.fc = nn.Dense(4, 4)

    def construct(self, x):
        return self.fc(x)
