from mindspore import nn
from recompat.runtime import ModuleList


class Net(nn.Cell):
    def __init__(self, n=3, skip=(1,)):
        super().__init__()
        self.blocks = ModuleList([nn.Dense(4, 4) if i not in skip else None for i in range(n)])
        self.heads = ModuleList([nn.Dense(4, 2), None])
        self.norms = nn.CellList([nn.LayerNorm((4,), epsilon=1e-05) for _ in range(n)])

    def construct(self, x):
        for block, norm in zip(self.blocks, self.norms):
            if block is not None:
                x = block(norm(x))
        return self.heads[0](x)
