import functools
import torch
import recompat.compat.selective

SAVE = [recompat.compat.selective.ops.aten.mm.default, recompat.compat.selective.ops.aten._scaled_dot_product_efficient_attention.default]


def policy(ctx, op, *args, **kwargs):
    if op in SAVE or op == recompat.compat.selective.ops.aten._to_copy.default:
        return recompat.compat.selective.CheckpointPolicy.MUST_SAVE
    return recompat.compat.selective.CheckpointPolicy.PREFER_RECOMPUTE


class Net(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.a = torch.nn.Linear(4, 4)
        self.a.recompute(use_reentrant=False, early_stop=False, context_fn=functools.partial(recompat.compat.selective.create_selective_checkpoint_contexts, SAVE))
        self.b = torch.nn.Linear(4, 4)
        self.b.recompute(use_reentrant=False, context_fn=lambda: recompat.compat.selective.create_selective_checkpoint_contexts(policy), early_stop=False)

    def forward(self, x):
        x = self.a(x)
        return self.b(x)


def wrap_block(module):
    module.recompute(use_reentrant=False, context_fn=functools.partial(recompat.compat.selective.create_selective_checkpoint_contexts, SAVE), early_stop=False)
    return module
