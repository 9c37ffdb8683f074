import mindspore
from mindspore import nn, ops


class Net(nn.Cell):
    def __init__(self):
        super().__init__()
        self.fc1 = nn.Dense(12, 24)
        self.relu = ops.ReLU()
        self.fc2 = nn.Dense(24, 48, has_bias=False)
        self.fc2.recompute()
        self.norm = nn.LayerNorm((48,), epsilon=1e-05)
        self.body = nn.SequentialCell([nn.Dense(48, 48), nn.ReLU()])
        self.fc3 = nn.Dense(48, 2)

    def construct(self, x):
        x = self.relu(self.fc1(x))
        x = self.fc2(x)
        x = self.body(self.norm(x))
        return ops.softmax(self.fc3(x), axis=-1)
