

class Block(nn.Cell):
    def __init__(self):
        super().__init__()
        self.drop = nn.Dropout(p=0.5)

    def construct(self, y):
        return ops.dropout(y, p=0.5)


class Net(nn.Cell):
    def __init__(self):
        super().__init__()
        self.block = Block()
        self.block.recompute()
