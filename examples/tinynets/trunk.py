"""A deep residual MLP whose trunk (an nn.Sequential of blocks) runs through checkpoint_sequential."""
import torch.nn as nn
from torch.utils.checkpoint import checkpoint_sequential


class ResidualMLPBlock(nn.Module):
    def __init__(self, dim, hidden_dim, dropout=0.0):
        super().__init__()
        self.norm = nn.LayerNorm(dim)
        self.fc1 = nn.Linear(dim, hidden_dim)
        self.act = nn.GELU()
        self.fc2 = nn.Linear(hidden_dim, dim)
        self.drop = nn.Dropout(dropout)

    def forward(self, x):
        return x + self.drop(self.fc2(self.act(self.fc1(self.norm(x)))))


class DeepMLP(nn.Module):
    """in_features -> dim, `depth` residual blocks, -> num_outputs.

    checkpoint_segments: 0 runs the trunk plainly; n > 0 splits it into n segments while training (the last one is
    not checkpointed, as torch does).
    """

    def __init__(self, in_features=20, dim=32, hidden_dim=64, depth=8, num_outputs=4, dropout=0.0,
                 checkpoint_segments=0):
        super().__init__()
        self.checkpoint_segments = checkpoint_segments
        self.embed = nn.Linear(in_features, dim)
        self.trunk = nn.Sequential(*[ResidualMLPBlock(dim, hidden_dim, dropout) for _ in range(depth)])
        self.norm = nn.LayerNorm(dim)
        self.head = nn.Linear(dim, num_outputs)

    def forward(self, x):
        x = self.embed(x)
        if self.checkpoint_segments > 0 and self.training:
            x = checkpoint_sequential(self.trunk, self.checkpoint_segments, x, use_reentrant=False)
        else:
            x = self.trunk(x)
        return self.head(self.norm(x))
