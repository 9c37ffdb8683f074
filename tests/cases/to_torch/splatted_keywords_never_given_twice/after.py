import torch.utils.checkpoint


def run(block, *args, **kwargs):
    return torch.utils.checkpoint.checkpoint(block, *args, **{"use_reentrant": False, **kwargs})


def run_non_reentrant(block, x, **options):
    return torch.utils.checkpoint.checkpoint(block, x, use_reentrant=False, **options)
