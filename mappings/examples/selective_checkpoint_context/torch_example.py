# PyTorch: a policy that reads its SelectiveCheckpointContext (is_recompute, op_output).
import functools

import numpy as np
import torch
from torch import nn
from torch.utils.checkpoint import checkpoint, CheckpointPolicy, SelectiveCheckpointContext, create_selective_checkpoint_contexts


def fixed(shape, phase=0.0):
    """A fixed pattern (no random numbers), so that both frameworks start from the same weights."""
    return (0.5 * np.sin(np.arange(np.prod(shape)) + phase)).reshape(shape).astype(np.float32)


class Block(nn.Module):
    def __init__(self):
        super().__init__()
        self.fc1 = nn.Linear(8, 16)
        self.fc2 = nn.Linear(16, 8)

    def forward(self, x):
        return self.fc2(torch.relu(self.fc1(x)))


SEEN = []


def policy(ctx: SelectiveCheckpointContext, op, *args, **kwargs):
    if op == torch.ops.aten.relu.default:
        SEEN.append(f"relu is_recompute={ctx.is_recompute} output={tuple(ctx.op_output.shape)}")
        return CheckpointPolicy.MUST_SAVE
    return CheckpointPolicy.PREFER_RECOMPUTE


class Net(nn.Module):
    def __init__(self):
        super().__init__()
        self.fc = nn.Linear(4, 8)
        self.block = Block()
        self.head = nn.Linear(8, 2)

    def forward(self, x):
        h = checkpoint(self.block, torch.tanh(self.fc(x)), use_reentrant=False, context_fn=functools.partial(create_selective_checkpoint_contexts, policy))
        return self.head(h)


net = Net()
with torch.no_grad():
    for p in net.parameters():
        p.copy_(torch.from_numpy(fixed(tuple(p.shape))))
x = torch.from_numpy(fixed((2, 4), phase=1.0)).requires_grad_()

loss = (net(x) ** 2).sum()
loss.backward()
print(f"loss {loss.item():.4f}")
print("grad x", " ".join(f"{v:.4f}" for v in x.grad.numpy().ravel()))
print("grad norms", " ".join(f"{np.linalg.norm(p.grad.numpy()):.4f}" for p in net.parameters()))
assert SEEN == ["relu is_recompute=False output=(2, 16)"], SEEN   # the policy runs in the forward only
