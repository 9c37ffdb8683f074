from mindspore import nn
from recompat.runtime import ModuleDict


class TinyGPT(nn.Cell):
    def __init__(self, vocab=10, width=4):
        super().__init__()
        self.transformer = ModuleDict(dict(
            wte=nn.Embedding(vocab, width),
            ln_f=nn.LayerNorm((width,), epsilon=1e-05),
        ))
        self.parts = ModuleDict({"norm": nn.LayerNorm((width,), epsilon=1e-05)})
        self.lm_head = nn.Dense(width, vocab, has_bias=False)
        self.transformer.wte.embedding_table = self.lm_head.weight      # weight tying

    def construct(self, idx):
        n = self.transformer.wte.embedding_table.numel() + self.parts.norm.gamma.numel()
        x = self.parts.norm(self.transformer.ln_f(self.transformer.wte(idx)))
        return self.lm_head(x) * n + self.transformer.ln_f.beta.sum()
