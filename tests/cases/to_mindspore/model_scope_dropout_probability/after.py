from mindspore import nn


class Net(nn.Cell):
    def __init__(self):
        super().__init__()
        self.a = nn.Dropout(p=0.1)
        self.b = nn.Dropout(p=0.3)
        self.c = nn.Dropout()

    def construct(self, x):
        return self.c(self.b(self.a(x)))
