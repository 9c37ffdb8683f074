"""Project-wide helpers: the checkpoint wrapper every model file imports instead of torch's.

Like timm's, it fixes the reentrancy choice in one place (non-reentrant unless asked) so that call sites need not
pass `use_reentrant` and torch does not warn about it.
"""
import torch
import torch.utils.checkpoint

_USE_REENTRANT_CKPT = False


def set_reentrant_ckpt(enable: bool = True):
    global _USE_REENTRANT_CKPT
    _USE_REENTRANT_CKPT = enable


def checkpoint(function, *args, use_reentrant=None, **kwargs):
    """torch.utils.checkpoint.checkpoint with the project's default for `use_reentrant`."""
    if use_reentrant is None:
        use_reentrant = _USE_REENTRANT_CKPT
    return torch.utils.checkpoint.checkpoint(function, *args, use_reentrant=use_reentrant, **kwargs)

