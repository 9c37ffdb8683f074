import mindspore


def f(a, b, x):
    return mindspore.recompute(lambda y: mindspore.recompute(b, y, use_reentrant=False, early_stop=False), x, use_reentrant=False, early_stop=False)
