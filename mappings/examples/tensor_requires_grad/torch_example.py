"""t.requires_grad: of a result computed from parameters (checkpointed only then, as torchvision's DenseNet
decides), of a parameter frozen and one not, of an integer tensor, and of a result read under no_grad."""
import numpy as np
import torch
from torch import nn
from torch.utils.checkpoint import checkpoint


class Example(nn.Module):
    def __init__(self):
        super().__init__()
        self.layer = nn.Linear(4, 4)
        self.head = nn.Linear(4, 3)
        self.frozen = nn.Parameter(torch.ones(3), requires_grad=False)

    def forward(self, x):
        h = self.layer(x)
        if h.requires_grad:
            h = checkpoint(self.head, h, use_reentrant=False)
        else:
            h = self.head(h)
        with torch.no_grad():
            inner = self.layer(x)
            unrecorded = inner.requires_grad
        flags = [h.requires_grad, self.head.weight.requires_grad, self.frozen.requires_grad,
                 torch.arange(3).requires_grad, unrecorded]
        return h * torch.tensor([float(f) for f in flags[:3]]), torch.tensor([float(f) for f in flags[3:]])


INPUTS = [np.linspace(-1.0, 1.0, 3 * 4, dtype=np.float32).reshape(3, 4)]
