import mindspore


def f(g, x):
    a = mindspore.recompute(g, x, use_reentrant=False, early_stop=False)
    b = mindspore.recompute(
        g,
        x, use_reentrant=False, early_stop=False  # the input
        # about debug
    )
    return mindspore.recompute(g, x,
                      use_reentrant=False, early_stop=False)
