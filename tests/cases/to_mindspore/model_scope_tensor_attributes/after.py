from mindspore import nn


class Net(nn.Cell):
    def __init__(self):
        super().__init__()
        self.fc = nn.Dense(4, 4)

    def construct(self, x):
        batch, width = x.shape
        h = self.fc(x)
        if h.requires_grad and x.ndim == 2:
            h = h * 2
        return h.T


def describe(entries):
    return [e.name for e in entries]
