import mindspore


def f(block, x):
    return mindspore.recompute(
        block,
        x,  # the input
        output_recompute=False,  # merge adjacent blocks
        early_stop=True,
    )
