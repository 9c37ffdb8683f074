"""regressor.py ported by hand, the MindSpore way: Cell.recompute() marks, a differentiated function,
value_and_grad, the optimizer called with the gradients."""
import mindspore
from mindspore import nn, ops


class Net(nn.Cell):
    def __init__(self):
        super().__init__()
        self.blocks = nn.CellList([nn.SequentialCell(nn.Dense(8, 8), nn.Tanh()) for _ in range(2)])
        for block in self.blocks:
            block.recompute()
        self.out = nn.Dense(8, 1)

    def construct(self, x):
        for block in self.blocks:
            x = block(x)
        return self.out(x)


mindspore.set_seed(0)
model = Net()
optimizer = nn.Momentum(model.trainable_params(), learning_rate=0.05, momentum=0.9)
loss_fn = nn.MSELoss()


def forward_fn(x, target):
    return loss_fn(model(x), target)


grad_fn = mindspore.value_and_grad(forward_fn, None, optimizer.parameters)
for step in range(20):
    x = ops.randn(16, 8)
    target = x.sum(axis=1, keepdims=True).sin()
    loss, grads = grad_fn(x, target)
    optimizer(grads)
