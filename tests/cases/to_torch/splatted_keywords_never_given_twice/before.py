import mindspore


def run(block, *args, **kwargs):
    return mindspore.recompute(block, *args, **kwargs)


def run_non_reentrant(block, x, **options):
    return mindspore.recompute(block, x, use_reentrant=False, **options)
