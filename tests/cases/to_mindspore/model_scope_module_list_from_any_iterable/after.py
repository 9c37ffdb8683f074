from mindspore import nn


class Stack(nn.Cell):
    def __init__(self, dim, depth, extra):
        super().__init__()
        self.blocks = nn.CellList([nn.Dense(dim, dim) for _ in range(depth)])
        self.norms = nn.CellList([nn.LayerNorm((dim,), epsilon=1e-05) for _ in range(depth)])
        self.extra = nn.CellList(list(extra))
        self.pair = nn.CellList([nn.Dense(dim, dim), nn.ReLU()])
        self.listed = nn.CellList([nn.Dense(dim, dim) for _ in range(depth)])

    def construct(self, x):
        for block, norm in zip(self.blocks, self.norms):
            x = norm(block(x))
        return x
