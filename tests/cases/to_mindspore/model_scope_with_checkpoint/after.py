import mindspore
from mindspore import nn, ops


class Block(nn.Cell):
    def __init__(self, dim):
        super().__init__()
        self.fc = nn.Dense(dim, dim)
        self.act = nn.GELU(approximate=False)

    def construct(self, x):
        return self.act(self.fc(x)) + x


class Encoder(nn.Cell):
    def __init__(self, dim=8, depth=3):
        super().__init__()
        self.blocks = nn.CellList([Block(dim) for _ in range(depth)])
        self.norm = nn.LayerNorm((dim,), epsilon=1e-6)

    def construct(self, x):
        for blk in self.blocks:
            x = mindspore.recompute(blk, x, use_reentrant=False, early_stop=False)
        x = ops.cat([x, x], axis=-1)
        return self.norm(x.mean(1).reshape(x.shape[0], -1)[:, :8])
