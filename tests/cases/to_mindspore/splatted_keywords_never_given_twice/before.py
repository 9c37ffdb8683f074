import torch.utils.checkpoint
from torch.utils.checkpoint import checkpoint


def run(function, *args, **kwargs):
    return checkpoint(function, *args, **kwargs)


def run_non_reentrant(block, x, **ckpt_kwargs):
    return checkpoint(block, x, use_reentrant=False, **ckpt_kwargs)


def run_with_options(block, x, options=None):
    return torch.utils.checkpoint.checkpoint(block, x, use_reentrant=False, **(options or {}))
