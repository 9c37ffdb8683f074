from torch.utils.checkpoint import checkpoint

# recompat: RC190 torch.utils.checkpoint.checkpoint left as it is: it is used as a value, not called
HOOKS = [checkpoint]
