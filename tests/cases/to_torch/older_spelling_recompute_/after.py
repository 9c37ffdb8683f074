from mindspore import nn
import torch.distributed._composable
import torch.utils.checkpoint


class Block(nn.Cell):
    def __init__(self, flag):
        super().__init__()
        self.attn = nn.Dense(8, 8)
        self.mlp = nn.Dense(8, 8)
        self.norm = nn.LayerNorm((8,))
        self.head = nn.Dense(8, 8)
        # recompat: RC290 self.head.recompute_(...) left as it is: mode=False turns recompute off for the Cell and marks nothing; torch has no mark to turn off: delete the call (and, if it undoes a mark, the checkpoint that mark became)
        self.head.recompute_(False)
        self.tail = nn.Dense(8, 8)
        # recompat: RC290 self.tail.recompute_(...) left as it is: mode=flag is decided at run time: True marks the Cell (torch: checkpoint its calls), False turns recompute off
        self.tail.recompute_(flag)

    def construct(self, x):
        x = torch.utils.checkpoint.checkpoint(self.norm, torch.utils.checkpoint.checkpoint(self.mlp, torch.utils.checkpoint.checkpoint(self.attn, x, use_reentrant=False), use_reentrant=False), use_reentrant=False)
        return self.tail(self.head(x))


def build(n):
    layers = []
    for _ in range(n):
        block = Block(True)
        torch.distributed._composable.checkpoint(block)
        layers.append(block)
    return nn.SequentialCell(layers)
