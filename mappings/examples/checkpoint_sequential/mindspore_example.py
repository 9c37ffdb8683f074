# MindSpore: recompat's recompute_sequential (what the translation adds to the file); the same fixed weights.
import mindspore
import numpy as np
from mindspore import nn, ops

mindspore.set_context(mode=mindspore.PYNATIVE_MODE)


def fixed(shape, phase=0.0):
    """A fixed pattern (no random numbers), so that both frameworks start from the same weights."""
    return (0.5 * np.sin(np.arange(np.prod(shape)) + phase)).reshape(shape).astype(np.float32)


def recompute_sequential(functions, segments, input, save_rng_state=True):
    """torch.utils.checkpoint.checkpoint_sequential for MindSpore (added by recompat).

    Splits functions into chunks of len(functions) // segments; the first
    segments - 1 chunks are recomputed in backward, the rest runs normally.
    """
    if isinstance(functions, mindspore.nn.SequentialCell):
        functions = functions.cells()
    functions = list(functions)
    size = len(functions) // segments

    def chain(part):
        def forward(x):
            for function in part:
                x = function(x)
            return x
        return forward

    for i in range(segments - 1):
        segment = chain(functions[i * size:(i + 1) * size])
        input = mindspore.recompute(
            segment, input, use_reentrant=False, early_stop=False, save_rng_state=save_rng_state)
    return chain(functions[(segments - 1) * size:])(input)


class Net(nn.Cell):
    def __init__(self):
        super().__init__()
        self.seq = nn.SequentialCell([nn.Dense(4, 8), nn.Tanh(), nn.Dense(8, 8), nn.Tanh(), nn.Dense(8, 2), nn.Tanh()])

    def construct(self, x):
        return recompute_sequential(self.seq, 2, x)


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
