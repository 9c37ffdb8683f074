import torch.utils.checkpoint as cp


def forward(self, prev_features, blk, kw):
    def closure(*inputs):
        return self.conv(torch.cat(inputs, 1))
    out = cp.checkpoint(closure, *prev_features)
    out = cp.checkpoint(lambda *i: blk(*i, **kw), out)
    return out
