from typing import TYPE_CHECKING, Optional
import mindspore
if TYPE_CHECKING:
    # recompat: RC161 torch names still imported: torch.distributed.algorithms._checkpoint.checkpoint_wrapper.CheckpointWrapper
    from torch.distributed.algorithms._checkpoint.checkpoint_wrapper import CheckpointWrapper


def f(block, x, w: Optional["CheckpointWrapper"] = None):
    return mindspore.recompute(block, x, use_reentrant=False, early_stop=False)
