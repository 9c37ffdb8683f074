import functools
import mindspore


class Model(nn.Module):
    def enable(self, flag):
        self.ckpt = functools.partial(mindspore.recompute, use_reentrant=flag, early_stop=False)

    def forward(self, x):
        x = self.ckpt(self.block, x)
        return self.ckpt(self.block, x, early_stop=False)
