try:
    import torch.utils.checkpoint as cp
except ImportError:
    cp = None


def f(g, x):
    if cp is None:
        return g(x)
    return cp.checkpoint(g, x) + cp.checkpoint(g, x, use_reentrant=False)
