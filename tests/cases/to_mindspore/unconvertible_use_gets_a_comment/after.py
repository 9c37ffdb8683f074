# recompat: RC161 torch names still imported: torch.utils.checkpoint.checkpoint
from torch.utils.checkpoint import checkpoint

# recompat: RC190 torch.utils.checkpoint.checkpoint left as it is: it is used as a value, not called
HOOKS = [checkpoint]
