import mindspore


def f(block, x, flag, ctx, opts):
    a = mindspore.recompute(block, x, use_reentrant=flag)
    b = mindspore.recompute(block, x, save_rng_state=False)
    c = mindspore.recompute(block, x, use_reentrant=False, context_fn=ctx)
    d = mindspore.recompute(block, x, output_recompute=False)
    e = mindspore.recompute(block, x, output_recompute=True)
    g = mindspore.recompute(block, x, use_reentrant=True, scale=2.0)
    return mindspore.recompute(block, x, **opts)
