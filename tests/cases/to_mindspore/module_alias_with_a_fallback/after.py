try:
    # recompat: RC161 torch names still imported: torch.utils.checkpoint
    import torch.utils.checkpoint as cp
except ImportError:
    cp = None


def f(g, x):
    if cp is None:
        return g(x)
    # recompat: RC191 torch.utils.checkpoint.checkpoint left as it is: cp is also bound to something else here
    return cp.checkpoint(g, x) + cp.checkpoint(g, x, use_reentrant=False)
