"""Steps torch's loop cannot say: gradients summed by hand, gradients with respect to the inputs."""
import mindspore
from mindspore import nn, ops
import torch

model = torch.nn.Linear(4, 1)
# recompat: RC301 mindspore.nn.SGD is outside the core API set recompat translates: left as it is; port it by hand
optimizer = nn.SGD(model.trainable_params(), learning_rate=0.1)
loss_fn = torch.nn.MSELoss()


def forward_fn(x, y):
    return loss_fn(model(x), y)


# recompat: RC348 grad_fn = mindspore.value_and_grad(...) is left as it is, with its calls: torch's loop cannot be written for it, as the gradients are read by `total = grads if total is None else [a + b for a, b in zi...`, which torch's loop has no statement for (they are .grad there) (after `loss, grads = grad_fn(x, y)`); in torch, call the function and backward() its loss: optimizer.zero_grad(); loss = forward_fn(x, y); loss.backward(); optimizer.step()
grad_fn = mindspore.value_and_grad(forward_fn, None, optimizer.parameters)
# recompat: RC348 input_grad_fn = mindspore.value_and_grad(...) is left as it is, with its calls: torch's loop cannot be written for it, as it differentiates with respect to inputs (grad_position is not None): torch's backward() fills the parameters' .grad; write torch.autograd.grad(loss, inputs) by hand; in torch, call the function and backward() its loss: optimizer.zero_grad(); loss = forward_fn(x, y); loss.backward(); optimizer.step()
input_grad_fn = mindspore.value_and_grad(forward_fn, 0)


def accumulate(batches):
    total = None
    for x, y in batches:
        loss, grads = grad_fn(x, y)
        total = grads if total is None else [a + b for a, b in zip(total, grads)]
    optimizer(total)


def saliency(x, y):
    _, grad_x = input_grad_fn(x, y)
    # recompat: RC301 mindspore.ops.abs is outside the core API set recompat translates: left as it is; port it by hand
    return ops.abs(grad_x)
