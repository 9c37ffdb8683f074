import torch
from torch.utils.checkpoint import checkpoint, SAC_IGNORED_OPS
from torch.distributed.algorithms._checkpoint.checkpoint_wrapper import (
    CheckpointImpl,
    CheckpointWrapper,
    offload_wrapper,
)
from transformers import AutoModel


def policy(ctx, op, *args, **kwargs):
    return op not in SAC_IGNORED_OPS


def f(block, x, m, impl):
    if isinstance(m, CheckpointWrapper) or impl is CheckpointImpl.NO_REENTRANT:
        m = offload_wrapper(m)
    inputs = torch.utils.checkpoint.detach_variable((x,))
    return checkpoint(block, *inputs, use_reentrant=False)


def load(name):
    model = AutoModel.from_pretrained(name)
    model.gradient_checkpointing_enable(gradient_checkpointing_kwargs={"use_reentrant": False})
    return model
