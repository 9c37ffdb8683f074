import functools
from functools import partial

# recompat: RC161 torch names still imported: torch.distributed.algorithms._checkpoint.checkpoint_wrapper.CheckpointImpl, torch.distributed.algorithms._checkpoint.checkpoint_wrapper.checkpoint_wrapper
from torch.distributed.algorithms._checkpoint.checkpoint_wrapper import CheckpointImpl, checkpoint_wrapper

# recompat: RC190 torch.distributed.algorithms._checkpoint.checkpoint_wrapper.checkpoint_wrapper left as it is: functools.partial of it has no MindSpore form
# recompat: RC160 torch.distributed.algorithms._checkpoint.checkpoint_wrapper.CheckpointImpl left as it is: torch's choice of checkpoint implementation
non_reentrant_wrapper = partial(checkpoint_wrapper, checkpoint_impl=CheckpointImpl.NO_REENTRANT)


def enable(model, check_fn):
    for _, cell in model.cells_and_names():
        if cell is not model and check_fn(cell):
            cell.recompute(use_reentrant=False, early_stop=False)


def enable_reentrant(model, check_fn):
    for _, cell in model.cells_and_names():
        if cell is not model and check_fn(cell):
            cell.recompute()
