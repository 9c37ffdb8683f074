from torch.utils.checkpoint import checkpoint


def f(g, x):
    a = checkpoint(g, x, use_reentrant=False, debug=True, determinism_check="none")
    b = checkpoint(
        g,
        x,  # the input
        # about debug
        debug=True  # its own comment
    )
    return checkpoint(g, x, debug=True,
                      use_reentrant=False)
