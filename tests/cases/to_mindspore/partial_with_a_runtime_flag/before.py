import functools
from torch.utils.checkpoint import checkpoint


class Model(nn.Module):
    def enable(self, flag):
        self.ckpt = functools.partial(checkpoint, use_reentrant=flag)

    def forward(self, x):
        x = self.ckpt(self.block, x)
        return self.ckpt(self.block, x, early_stop=True)
