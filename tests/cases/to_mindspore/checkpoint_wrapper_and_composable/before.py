from torch.distributed._composable import checkpoint
from torch.distributed.algorithms._checkpoint.checkpoint_wrapper import (
    CheckpointImpl,
    checkpoint_wrapper,
)


class Model(nn.Module):
    def __init__(self):
        super().__init__()
        self.a = checkpoint_wrapper(Block(), checkpoint_impl=CheckpointImpl.REENTRANT)
        self.b = checkpoint_wrapper(Block())
        self.c = Block()
        checkpoint(self.c)
        self.layers[0] = checkpoint_wrapper(self.layers[0])
