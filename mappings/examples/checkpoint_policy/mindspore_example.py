# MindSpore: the same policy over recompat's CheckpointPolicy and ops.
import functools

import mindspore
import numpy as np
from mindspore import nn, ops

import recompat.compat.selective

mindspore.set_context(mode=mindspore.PYNATIVE_MODE)


def fixed(shape, phase=0.0):
    """A fixed pattern (no random numbers), so that both frameworks start from the same weights."""
    return (0.5 * np.sin(np.arange(np.prod(shape)) + phase)).reshape(shape).astype(np.float32)


class Block(nn.Cell):
    def __init__(self):
        super().__init__()
        self.fc1 = nn.Dense(8, 16)
        self.fc2 = nn.Dense(16, 8)

    def construct(self, x):
        return self.fc2(ops.relu(self.fc1(x)))


SAVED = []


def policy(ctx, op, *args, **kwargs):
    if op == recompat.compat.selective.ops.aten.addmm.default:
        SAVED.append(str(op))
        return recompat.compat.selective.CheckpointPolicy.MUST_SAVE
    return recompat.compat.selective.CheckpointPolicy.PREFER_RECOMPUTE


class Net(nn.Cell):
    def __init__(self):
        super().__init__()
        self.fc = nn.Dense(4, 8)
        self.block = Block()
        self.head = nn.Dense(8, 2)

    def construct(self, x):
        h = mindspore.recompute(self.block, ops.tanh(self.fc(x)), use_reentrant=False, context_fn=functools.partial(recompat.compat.selective.create_selective_checkpoint_contexts, policy))
        return self.head(h)


net = Net()
for p in net.trainable_params():
    p.set_data(mindspore.Tensor(fixed(p.shape)))
x = mindspore.Tensor(fixed((2, 4), phase=1.0))


def loss_fn(x):
    return (net(x) ** 2).sum()


loss, (grad_x, grads) = mindspore.value_and_grad(loss_fn, grad_position=0, weights=net.trainable_params())(x)
print(f"loss {float(loss.asnumpy()):.4f}")
print("grad x", " ".join(f"{v:.4f}" for v in grad_x.asnumpy().ravel()))
print("grad norms", " ".join(f"{np.linalg.norm(g.asnumpy()):.4f}" for g in grads))
assert SAVED == ["aten.addmm.default"] * 2, SAVED   # both Linear layers of the block: kept, not recomputed
