import functools
import torch
from torch.utils.checkpoint import checkpoint, create_selective_checkpoint_contexts, CheckpointPolicy
from torch.distributed.algorithms._checkpoint.checkpoint_wrapper import checkpoint_wrapper as ptd_checkpoint_wrapper

SAVE = [torch.ops.aten.mm.default, torch.ops.aten._scaled_dot_product_efficient_attention.default]


def policy(ctx, op, *args, **kwargs):
    if op in SAVE or op == torch.ops.aten._to_copy.default:
        return CheckpointPolicy.MUST_SAVE
    return CheckpointPolicy.PREFER_RECOMPUTE


class Net(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.a = torch.nn.Linear(4, 4)
        self.b = ptd_checkpoint_wrapper(torch.nn.Linear(4, 4), context_fn=lambda: create_selective_checkpoint_contexts(policy), early_stop=False)

    def forward(self, x):
        x = checkpoint(self.a, x, use_reentrant=False, context_fn=functools.partial(create_selective_checkpoint_contexts, SAVE))
        return self.b(x)


def wrap_block(module):
    return ptd_checkpoint_wrapper(module, context_fn=functools.partial(create_selective_checkpoint_contexts, SAVE))
