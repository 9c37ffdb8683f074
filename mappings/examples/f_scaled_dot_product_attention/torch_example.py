"""F.scaled_dot_product_attention plain, causal, with a bool and a float mask and a given scale."""
import numpy as np
import torch
import torch.nn.functional as F
from torch import nn


class Example(nn.Module):
    def __init__(self):
        super().__init__()
        self.qkv = nn.Linear(8, 24)
        self.out = nn.Linear(8, 3)

    def forward(self, x):
        q, k, v = self.qkv(x).reshape(2, 5, 3, 2, 4).permute(2, 0, 3, 1, 4)     # (2, heads 2, 5, 4) each
        keep = torch.ones(5, 5, dtype=torch.bool).tril()
        bias = torch.linspace(-1.0, 1.0, 25).reshape(5, 5)
        a = F.scaled_dot_product_attention(q, k, v)
        b = F.scaled_dot_product_attention(q, k, v, is_causal=True)
        c = F.scaled_dot_product_attention(q, k, v, attn_mask=keep, scale=0.5)
        d = F.scaled_dot_product_attention(query=q, key=k, value=v, attn_mask=bias, dropout_p=0.0)
        return self.out((a + b + c + d).transpose(1, 2).reshape(2, 5, 8))


INPUTS = [np.linspace(-1.0, 1.0, 2 * 5 * 8, dtype=np.float32).reshape(2, 5, 8)]
