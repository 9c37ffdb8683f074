from functools import partial
from torch.utils.checkpoint import checkpoint

ckpt = partial(checkpoint, use_reentrant=False, preserve_rng_state=False, determinism_check="none")


def run(f, x):
    return ckpt(f, x)
