import mindspore


class M(nn.Module):
    def __init__(self):
        super().__init__()
        self.block = Block()

    def forward(self, x):
        x = mindspore.recompute(self.block, x, use_reentrant=True)
        return mindspore.recompute(self.block, x)
