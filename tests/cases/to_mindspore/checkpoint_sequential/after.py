import mindspore


def recompute_sequential(functions, segments, input, save_rng_state=True):
    """torch.utils.checkpoint.checkpoint_sequential for MindSpore (added by recompat).

    Splits functions into chunks of len(functions) // segments; the first
    segments - 1 chunks are recomputed in backward, the rest runs normally.
    """
    if isinstance(functions, mindspore.nn.SequentialCell):
        functions = functions.cells()
    functions = list(functions)
    size = len(functions) // segments

    def chain(part):
        def forward(x):
            for function in part:
                x = function(x)
            return x
        return forward

    for i in range(segments - 1):
        segment = chain(functions[i * size:(i + 1) * size])
        input = mindspore.recompute(
            segment, input, use_reentrant=False, early_stop=False, save_rng_state=save_rng_state)
    return chain(functions[(segments - 1) * size:])(input)


def run(model, x, y):
    x = recompute_sequential(model, 2, x)
    return recompute_sequential(model, 3, y, save_rng_state=False)
