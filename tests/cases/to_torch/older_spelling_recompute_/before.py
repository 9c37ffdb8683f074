from mindspore import nn


class Block(nn.Cell):
    def __init__(self, flag):
        super().__init__()
        self.attn = nn.Dense(8, 8)
        self.attn.recompute_()
        self.mlp = nn.Dense(8, 8)
        self.mlp.recompute_(True)
        self.norm = nn.LayerNorm((8,))
        self.norm.recompute_(mode=True)
        self.head = nn.Dense(8, 8)
        self.head.recompute_(False)
        self.tail = nn.Dense(8, 8)
        self.tail.recompute_(flag)

    def construct(self, x):
        x = self.norm(self.mlp(self.attn(x)))
        return self.tail(self.head(x))


def build(n):
    layers = []
    for _ in range(n):
        block = Block(True)
        block.recompute_(mode=True)
        layers.append(block)
    return nn.SequentialCell(layers)
