from mindspore import nn
import torch.distributed._composable


class Block(nn.Cell):
    def __init__(self):
        super().__init__()
        self.dense = nn.Dense(4, 4)
        torch.distributed._composable.checkpoint(self)
