from torch.utils.checkpoint import checkpoint_sequential


def run(model, x, y):
    x = checkpoint_sequential(model, 2, x, use_reentrant=False)
    return checkpoint_sequential(model, 3, y, preserve_rng_state=False)
