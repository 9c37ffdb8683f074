import mindspore


def f(args):
    return mindspore.recompute(*args)
