import torch.distributed._composable
import torch.utils.checkpoint
from mindspore import nn, ops


class Block(nn.Cell):
    def __init__(self):
        super().__init__()
        self.dense = nn.Dense(8, 8)

    def construct(self, x, scale=1.0):
        return ops.relu(self.dense(x)) * scale


class Net(nn.Cell):
    def __init__(self):
        super().__init__()
        self.fc1 = nn.Dense(8, 8)
        self.fc2 = nn.Dense(8, 8)
        self.relu2 = ops.ReLU()
        self.blk = Block()
        self.kw = Block()
        self.out = Block()
        self.tail = self._make_layer(3)

    def _make_layer(self, n):
        layers = []
        for _ in range(n):
            layer = Block()
            torch.distributed._composable.checkpoint(layer)
            layers.append(layer)
        return nn.SequentialCell(layers)

    def construct(self, x):
        x = self.fc1(x)
        x = self.relu2(torch.utils.checkpoint.checkpoint(self.fc2, x, use_reentrant=False))
        x = torch.utils.checkpoint.checkpoint(self.blk, x, use_reentrant=False)
        x = torch.utils.checkpoint.checkpoint(self.kw, x, scale=0.5, use_reentrant=False)
        x = torch.utils.checkpoint.checkpoint(self.out, x, use_reentrant=False)
        return self.tail(x)
