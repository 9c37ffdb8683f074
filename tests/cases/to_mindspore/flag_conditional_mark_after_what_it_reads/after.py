import torch
from torch import nn
import recompat.compat.selective


class Model(nn.Module):
    """The mark reads an attribute set after the block and the flag: it goes after that one."""

    def __init__(self, recompute: bool = True) -> None:
        super().__init__()
        self.block = nn.Sequential(nn.Linear(4, 4), nn.ReLU())
        self.recompute = recompute
        self.context_fn = recompat.compat.selective.noop_context_fn
        if self.recompute:
            self.block.recompute(use_reentrant=False, early_stop=False, context_fn=self.context_fn)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        if self.recompute:
            return self.block(x)
        else:
            return self.block(x)
