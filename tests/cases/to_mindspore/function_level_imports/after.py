import inspect
import mindspore


def run(f, x):
    return mindspore.recompute(f, x, use_reentrant=False, early_stop=False)


def signature():
    # recompat: RC161 torch names still imported: torch.utils.checkpoint.checkpoint
    from torch.utils.checkpoint import checkpoint

    # recompat: RC190 torch.utils.checkpoint.checkpoint left as it is: it is used as a value, not called
    return inspect.signature(checkpoint)
