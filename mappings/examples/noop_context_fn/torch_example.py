# PyTorch: context_fn=noop_context_fn, torch's default, spelled out: the whole block is recomputed.
import functools

import numpy as np
import torch
from torch import nn
from torch.utils.checkpoint import checkpoint, noop_context_fn


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



class Net(nn.Module):
    def __init__(self):
        super().__init__()
        self.fc = nn.Linear(4, 8)
        self.block = Block()
        self.head = nn.Linear(8, 2)

    def forward(self, x):
        h = checkpoint(self.block, torch.tanh(self.fc(x)), use_reentrant=False, context_fn=noop_context_fn)
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
