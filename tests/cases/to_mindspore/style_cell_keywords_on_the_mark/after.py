

class Net(nn.Module):
    def __init__(self):
        super().__init__()
        self.block = Block()
        self.block.recompute(use_reentrant=False, early_stop=False, context_fn=ctx)

    def forward(self, x):
        return self.block(x)
