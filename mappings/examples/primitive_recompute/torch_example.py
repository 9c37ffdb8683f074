# PyTorch: the translation; the operator's mark is dropped (RC222): torch keeps an operator's output for the
# backward of the operator that uses it, so a checkpoint around one operator would save nothing.
import numpy as np
import torch
from torch import nn


def fixed(shape, phase=0.0):
    """A fixed pattern (no random numbers), so that both frameworks start from the same weights."""
    return (0.5 * np.sin(np.arange(np.prod(shape)) + phase)).reshape(shape).astype(np.float32)


class Net(nn.Module):
    def __init__(self):
        super().__init__()
        self.fc1 = nn.Linear(4, 8)
        self.tanh = nn.Tanh()
        self.fc2 = nn.Linear(8, 2)

    def forward(self, x):
        x = self.tanh(self.fc1(x))
        return self.fc2(x)


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
