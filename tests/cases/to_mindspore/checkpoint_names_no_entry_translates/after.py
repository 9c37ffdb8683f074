import torch
# recompat: RC161 torch names still imported: torch.utils.checkpoint.SAC_IGNORED_OPS
from torch.utils.checkpoint import SAC_IGNORED_OPS
# recompat: RC161 torch names still imported: torch.distributed.algorithms._checkpoint.checkpoint_wrapper.CheckpointImpl, torch.distributed.algorithms._checkpoint.checkpoint_wrapper.CheckpointWrapper, torch.distributed.algorithms._checkpoint.checkpoint_wrapper.offload_wrapper
from torch.distributed.algorithms._checkpoint.checkpoint_wrapper import (
    CheckpointImpl,
    CheckpointWrapper,
    offload_wrapper,
)
from transformers import AutoModel
import mindspore


def policy(ctx, op, *args, **kwargs):
    # recompat: RC160 torch.utils.checkpoint.SAC_IGNORED_OPS left as it is: the ops torch's selective checkpointing neither caches nor counts
    return op not in SAC_IGNORED_OPS


def f(block, x, m, impl):
    # recompat: RC160 torch.distributed.algorithms._checkpoint.checkpoint_wrapper.CheckpointWrapper left as it is: the class of torch's checkpoint wrappers
    # recompat: RC160 torch.distributed.algorithms._checkpoint.checkpoint_wrapper.CheckpointImpl left as it is: torch's choice of checkpoint implementation
    if isinstance(m, CheckpointWrapper) or impl is CheckpointImpl.NO_REENTRANT:
        # recompat: RC160 torch.distributed.algorithms._checkpoint.checkpoint_wrapper.offload_wrapper left as it is: torch's wrapper that offloads saved activations to CPU
        m = offload_wrapper(m)
    # recompat: RC160 torch.utils.checkpoint.detach_variable left as it is: torch's helper that detaches a tuple of tensors
    inputs = torch.utils.checkpoint.detach_variable((x,))
    return mindspore.recompute(block, *inputs, use_reentrant=False, early_stop=False)


def load(name):
    model = AutoModel.from_pretrained(name)
    # recompat: RC160 transformers.PreTrainedModel.gradient_checkpointing_enable left as it is: Hugging Face's switch for torch checkpointing in every layer of a model
    model.gradient_checkpointing_enable(gradient_checkpointing_kwargs={"use_reentrant": False})
    return model
