import torch
from torch import nn
from torch.utils.checkpoint import checkpoint, noop_context_fn


class Model(nn.Module):
    """The mark reads an attribute set after the block and the flag: it goes after that one."""

    def __init__(self, recompute: bool = True) -> None:
        super().__init__()
        self.block = nn.Sequential(nn.Linear(4, 4), nn.ReLU())
        self.recompute = recompute
        self.context_fn = noop_context_fn

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        if self.recompute:
            return checkpoint(self.block, x, use_reentrant=False, context_fn=self.context_fn)
        else:
            return self.block(x)
