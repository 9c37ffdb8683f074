import mindspore
import numpy as np
from mindspore import nn, ops
import torch.utils.checkpoint


class Net(nn.Cell):
    def __init__(self):
        super().__init__()
        self.fc1 = nn.Dense(12, 24)
        self.relu1 = ops.ReLU()
        self.fc2 = nn.Dense(24, 48)
        self.relu2 = ops.ReLU()
        self.fc3 = nn.Dense(48, 2)

    def construct(self, x):
        x = self.fc1(x)
        x = self.relu1(x)
        x = torch.utils.checkpoint.checkpoint(self.fc2, x, use_reentrant=False)
        x = self.relu2(x)
        x = self.fc3(x)
        return x
