from mindspore import nn, ops


class ConvNet(nn.Cell):
    def __init__(self):
        super().__init__()
        self.conv = nn.Conv2d(3, 8, 3, padding=1, pad_mode='pad', has_bias=True)
        self.bn = nn.BatchNorm2d(8, momentum=0.8)
        self.pool = nn.MaxPool2d(2, stride=2)
        self.flatten = nn.Flatten()
        self.fc = nn.Dense(8 * 4 * 4, 10)

    def construct(self, x):
        x = self.pool(ops.relu(self.bn(self.conv(x))))
        x = self.flatten(x)
        a, b = ops.split(self.fc(x), 5, axis=1)
        return ops.cat([a.swapaxes(0, 1), b.swapaxes(0, 1)], axis=0)
