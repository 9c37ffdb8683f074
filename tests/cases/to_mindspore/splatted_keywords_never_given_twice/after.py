import mindspore


def run(function, *args, **kwargs):
    return mindspore.recompute(function, *args, **{"use_reentrant": False, "early_stop": False, **kwargs})


def run_non_reentrant(block, x, **ckpt_kwargs):
    return mindspore.recompute(block, x, use_reentrant=False, **{"early_stop": False, **ckpt_kwargs})


def run_with_options(block, x, options=None):
    return mindspore.recompute(block, x, use_reentrant=False, **{"early_stop": False, **(options or {})})
