from typing import TYPE_CHECKING, Optional
from torch.utils.checkpoint import checkpoint
if TYPE_CHECKING:
    from torch.distributed.algorithms._checkpoint.checkpoint_wrapper import CheckpointWrapper


def f(block, x, w: Optional["CheckpointWrapper"] = None):
    return checkpoint(block, x, use_reentrant=False)
