from torch.utils.checkpoint import checkpoint


class M(nn.Module):
    def __init__(self):
        super().__init__()
        self.block = Block()

    def forward(self, x, m):
        return checkpoint(
            self.block,
            x,
            use_reentrant=False,
            preserve_rng_state=False,
            context_fn=my_context,
            determinism_check="none",
            debug=True,
            early_stop=False,
            mask=m,
        )
