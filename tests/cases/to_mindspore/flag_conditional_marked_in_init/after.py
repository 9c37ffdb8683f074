import torch
from torch import nn
import mindspore


class AutoEncoder(nn.Module):
    """MONAI's AutoencoderKL: each block checkpointed under a flag set once, when the model is built."""

    def __init__(self, use_checkpoint: bool = False) -> None:
        super().__init__()
        self.encoder: nn.Module = nn.Sequential(nn.Linear(4, 4), nn.ReLU())
        self.decoder = nn.Sequential(nn.Linear(4, 4), nn.ReLU())
        self.use_checkpoint = use_checkpoint
        if self.use_checkpoint:
            self.encoder.recompute(use_reentrant=False, early_stop=False)
        if self.use_checkpoint:
            self.decoder.recompute(use_reentrant=False, early_stop=False)

    def encode(self, x: torch.Tensor) -> torch.Tensor:
        if self.use_checkpoint:
            h = self.encoder(x)
        else:
            h = self.encoder(x)
        return h

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        if self.use_checkpoint:
            return self.decoder(self.encode(x))
        else:
            return self.decoder(self.encode(x))


class Switchable(nn.Module):
    """A flag another method sets (Hugging Face's gradient_checkpointing_enable): read at every call."""

    def __init__(self) -> None:
        super().__init__()
        self.body = nn.Sequential(nn.Linear(4, 4), nn.ReLU())
        self.gradient_checkpointing = False

    def enable(self) -> None:
        self.gradient_checkpointing = True

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        if self.gradient_checkpointing:
            return mindspore.recompute(self.body, x, use_reentrant=False, early_stop=False)
        else:
            return self.body(x)
