from mindspore import nn


class Net(nn.Cell):
    def __init__(self):
        super().__init__()
        self.a = nn.Dropout(keep_prob=0.9)
        self.b = nn.Dropout(p=0.3)

    def construct(self, x):
        return self.b(self.a(x))
