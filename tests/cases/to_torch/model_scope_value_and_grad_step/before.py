"""A MindSpore training script: the step is a differentiated function, the optimizer called with the gradients."""
import mindspore
from mindspore import nn, ops
from mindspore.experimental import optim


class Net(nn.Cell):
    def __init__(self):
        super().__init__()
        self.body = nn.SequentialCell(nn.Dense(8, 8), nn.Tanh())
        self.out = nn.Dense(8, 1)

    def construct(self, x):
        return self.out(self.body(x))


model = Net()
optimizer = optim.SGD(model.trainable_params(), lr=0.05, momentum=0.9)
scheduler = optim.lr_scheduler.StepLR(optimizer, step_size=5)
loss_fn = nn.MSELoss()


def forward_fn(x, target):
    out = model(x)
    return loss_fn(out, target), out


grad_fn = mindspore.value_and_grad(forward_fn, None, optimizer.parameters, has_aux=True)


@mindspore.jit
def train_step(x, target):
    (loss, _), grads = grad_fn(x, target)  # the value, then the gradients
    grads = ops.clip_by_norm(grads, max_norm=1.0)
    loss = ops.depend(loss, optimizer(grads))
    return loss


model.set_train()
for step in range(20):
    x = ops.randn(16, 8)
    target = x.sum(axis=1, keepdims=True).sin()
    loss = train_step(x, target)
    scheduler.step()
    print(f"step {step} loss {loss.item():.4f}")
model.set_train(False)
