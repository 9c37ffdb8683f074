import mindspore as ms


def mark_all(blocks, ctx):
    layers = []
    for layer in blocks:
        layer.recompute(recompute_slice_activation=True)
        layers.append(layer)
    for layer in blocks:
        layer.recompute(mp_comm_recompute=False, parallel_optimizer_comm_recompute=True)
    for layer in blocks:
        layer.recompute(use_reentrant=False, context_fn=ctx)
    return ms.nn.SequentialCell(*layers)
