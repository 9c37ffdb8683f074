"""A tiny MLP-Mixer; its blocks run through the project's own checkpoint wrapper (timm style)."""
import torch.nn as nn

from .utils import checkpoint


class Mlp(nn.Module):
    def __init__(self, in_features, hidden_features, drop=0.0):
        super().__init__()
        self.fc1 = nn.Linear(in_features, hidden_features)
        self.act = nn.GELU()
        self.fc2 = nn.Linear(hidden_features, in_features)
        self.drop = nn.Dropout(drop)

    def forward(self, x):
        return self.drop(self.fc2(self.drop(self.act(self.fc1(x)))))


class MixerBlock(nn.Module):
    def __init__(self, dim, seq_len, tokens_hidden, channels_hidden, drop=0.0):
        super().__init__()
        self.norm1 = nn.LayerNorm(dim, eps=1e-6)
        self.mlp_tokens = Mlp(seq_len, tokens_hidden, drop=drop)
        self.norm2 = nn.LayerNorm(dim, eps=1e-6)
        self.mlp_channels = Mlp(dim, channels_hidden, drop=drop)

    def forward(self, x):
        x = x + self.mlp_tokens(self.norm1(x).transpose(1, 2)).transpose(1, 2)
        x = x + self.mlp_channels(self.norm2(x))
        return x


class TinyMixer(nn.Module):
    def __init__(self, img_size=16, patch_size=4, in_chans=3, dim=32, depth=4, num_classes=10, drop_rate=0.0):
        super().__init__()
        num_patches = (img_size // patch_size) * (img_size // patch_size)
        self.grad_checkpointing = False
        self.stem = nn.Conv2d(in_chans, dim, kernel_size=patch_size, stride=patch_size)
        self.blocks = nn.ModuleList(
            [MixerBlock(dim, num_patches, tokens_hidden=dim, channels_hidden=dim * 2, drop=drop_rate)
             for _ in range(depth)]
        )
        self.norm = nn.LayerNorm(dim, eps=1e-6)
        self.head = nn.Linear(dim, num_classes)

    def set_grad_checkpointing(self, enable=True):
        self.grad_checkpointing = enable

    def forward(self, x):
        x = self.stem(x).flatten(2).transpose(1, 2)  # (B, C, H, W) -> (B, tokens, C)
        for blk in self.blocks:
            if self.grad_checkpointing:
                x = checkpoint(blk, x)
            else:
                x = blk(x)
        x = self.norm(x).mean(dim=1)
        return self.head(x)
