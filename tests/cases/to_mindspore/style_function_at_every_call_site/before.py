from __future__ import annotations

from typing import Optional

import torch
import torch.nn as nn
from torch.utils.checkpoint import checkpoint


class CheckpointWrapper(nn.Module):
    """A wrapper given its block (MONAI's ActivationCheckpointWrapper): the annotation shows a Module."""

    def __init__(self, module: nn.Module) -> None:
        super().__init__()
        self.module = module

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return checkpoint(self.module, x, use_reentrant=False)


class MaybeWrapper(nn.Module):
    """Optional: it may hold None, which has no recompute(); unannotated: anything callable."""

    def __init__(self, module: Optional[nn.Module], other) -> None:
        super().__init__()
        self.module = module
        self.other = other

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return checkpoint(self.other, checkpoint(self.module, x, use_reentrant=False), use_reentrant=False)
