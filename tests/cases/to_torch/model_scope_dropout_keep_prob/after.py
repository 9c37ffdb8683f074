from torch import nn


class Net(nn.Module):
    def __init__(self):
        super().__init__()
        self.a = nn.Dropout(p=0.1)
        self.b = nn.Dropout(p=0.3)

    def forward(self, x):
        return self.b(self.a(x))
