from mindspore import nn, ops


class Net(nn.Cell):
    def __init__(self):
        super().__init__()
        self.conv = nn.Conv2d(3, 8, 3, padding=1, pad_mode='pad', has_bias=True)
        self.bn = nn.BatchNorm2d(8, momentum=0.8)
        self.pool = nn.MaxPool2d(2, stride=2)
        self.fc = nn.Dense(8 * 4 * 4, 16, has_bias=False)
        self.norm = nn.LayerNorm((16,), epsilon=1e-05)
        self.drop = nn.Dropout()
        self.head = nn.SequentialCell([nn.Dense(16, 16), nn.ReLU(), nn.Dense(16, 2)])

    def construct(self, x):
        x = self.pool(ops.relu(self.bn(self.conv(x))))
        x = x.view(x.shape[0], -1)
        x = self.drop(self.norm(self.fc(x)))
        return self.head(x)
