"""A MindSpore training script written the MindSpore way, for `recompat job --to torch`: a recomputed block, the
step a function differentiated by value_and_grad (has_aux), its gradients clipped, the optimizer called inside
ops.depend under @mindspore.jit, an experimental optimizer with a schedule stepped per epoch."""
import argparse

import mindspore
from mindspore import nn, ops
from mindspore.experimental import optim

parser = argparse.ArgumentParser()
parser.add_argument("--epochs", type=int, default=2)
parser.add_argument("--clip", type=float, default=0.1)
args = parser.parse_args()


class Net(nn.Cell):
    def __init__(self):
        super().__init__()
        self.body = nn.SequentialCell(nn.Dense(8, 16), nn.Tanh(), nn.Dense(16, 8), nn.Tanh())
        self.body.recompute()
        self.out = nn.Dense(8, 1)

    def construct(self, x):
        return self.out(self.body(x))


model = Net()
optimizer = optim.SGD(model.trainable_params(), lr=0.1, momentum=0.9)
schedule = optim.lr_scheduler.StepLR(optimizer, step_size=1, gamma=0.5)
loss_fn = nn.MSELoss()


def forward_fn(x, target):
    out = model(x)
    return loss_fn(out, target), out


grad_fn = mindspore.value_and_grad(forward_fn, None, optimizer.parameters, has_aux=True)


@mindspore.jit
def train_step(x, target):
    (loss, _), grads = grad_fn(x, target)
    grads = ops.clip_by_norm(grads, max_norm=args.clip)
    loss = ops.depend(loss, optimizer(grads))
    return loss


model.set_train()
for epoch in range(args.epochs):
    for batch in range(4):
        x = ops.randn(16, 8)
        target = (x.sum(axis=1, keepdims=True) * 2).sin()
        loss = train_step(x, target)
    schedule.step()
    print(f"epoch {epoch} loss {loss.item():.4f}")
