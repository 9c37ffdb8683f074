try:
    # recompat: RC261 MindSpore names still imported: mindspore.recompute
    from mindspore import recompute
except ImportError:
    recompute = None


def f(block, x):
    # recompat: RC291 recompute is bound both to mindspore.recompute and to something else in this file; left as it is: rename one of them, then translate again
    return recompute(block, x)
