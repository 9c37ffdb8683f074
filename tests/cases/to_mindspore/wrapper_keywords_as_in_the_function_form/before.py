from torch.distributed._composable import checkpoint
from torch.distributed.algorithms._checkpoint.checkpoint_wrapper import CheckpointImpl, checkpoint_wrapper


class Model(nn.Module):
    def __init__(self, context_fn):
        super().__init__()
        self.a = checkpoint_wrapper(Block(), context_fn=context_fn)
        self.b = checkpoint_wrapper(Block(), CheckpointImpl.REENTRANT, preserve_rng_state=False)
        self.c = checkpoint_wrapper(Block(), checkpoint_impl=CheckpointImpl.NO_REENTRANT, early_stop=True, debug=True)
        self.d = Block()
        checkpoint(self.d, context_fn=context_fn)
        self.e = Block()
        checkpoint(self.e, determinism_check="none")
