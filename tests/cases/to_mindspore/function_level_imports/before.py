import inspect


def run(f, x):
    from torch.utils.checkpoint import checkpoint

    return checkpoint(f, x, use_reentrant=False)


def signature():
    from torch.utils.checkpoint import checkpoint

    return inspect.signature(checkpoint)
