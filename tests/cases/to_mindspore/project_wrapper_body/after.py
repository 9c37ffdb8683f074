import mindspore


def checkpoint(function, *args, use_reentrant=None, **kwargs):
    return mindspore.recompute(function, *args, use_reentrant=use_reentrant, **{"early_stop": False, **kwargs})


def block_forward(block, x):
    return checkpoint(block, x)
