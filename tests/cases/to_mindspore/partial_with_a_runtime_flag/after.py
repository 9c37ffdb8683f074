import functools
import mindspore


def recompute_partial(function, *bound, **options):
    """functools.partial for recompute (added by recompat): MindSpore's GRAPH mode
    cannot call a functools.partial object in construct, it compiles this closure.
    Keywords given at the call override the bound ones, as with functools.partial.
    """
    def call(*args, **kwargs):
        return function(*bound, *args, **{**options, **kwargs})
    return call


class Model(nn.Module):
    def enable(self, flag):
        self.ckpt = recompute_partial(mindspore.recompute, use_reentrant=flag, early_stop=False)

    def forward(self, x):
        x = self.ckpt(self.block, x)
        return self.ckpt(self.block, x, early_stop=False)
