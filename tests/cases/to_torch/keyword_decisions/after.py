import torch.utils.checkpoint


def f(block, x, flag, ctx, opts):
    a = torch.utils.checkpoint.checkpoint(block, x, use_reentrant=False)
    b = torch.utils.checkpoint.checkpoint(block, x, preserve_rng_state=False, use_reentrant=False)
    c = torch.utils.checkpoint.checkpoint(block, x, use_reentrant=False, context_fn=ctx)
    d = torch.utils.checkpoint.checkpoint(block, x, use_reentrant=False)
    e = torch.utils.checkpoint.checkpoint(block, x, use_reentrant=False)
    g = torch.utils.checkpoint.checkpoint(block, x, use_reentrant=False, scale=2.0)
    return torch.utils.checkpoint.checkpoint(block, x, **{"use_reentrant": False, **opts})
