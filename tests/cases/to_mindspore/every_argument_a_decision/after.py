import mindspore


class M(nn.Module):
    def __init__(self):
        super().__init__()
        self.block = Block()

    def forward(self, x, m):
        return mindspore.recompute(
            self.block,
            x,
            use_reentrant=False,
            save_rng_state=False,
            context_fn=my_context,
            early_stop=False,
            mask=m,
        )
