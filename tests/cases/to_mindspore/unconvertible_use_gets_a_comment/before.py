from torch.utils.checkpoint import checkpoint

HOOKS = [checkpoint]
