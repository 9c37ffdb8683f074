from mindspore import nn


class Net(nn.Cell):
    def __init__(self):
        super().__init__()
        self.attn = nn.Dense(4, 4)
        self.attn.recompute()

    def construct(self, x, mask):
        y = self.attn(x)
        return self.attn(
            y,  # again
            mask=mask,
        )
