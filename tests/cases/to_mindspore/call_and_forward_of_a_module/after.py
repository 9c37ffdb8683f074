import mindspore


def run(layers, h, mask):
    for layer in layers:
        h = mindspore.recompute(layer, h, mask, use_reentrant=False, early_stop=False)
        h = mindspore.recompute(layer, h, mask)
    return h
