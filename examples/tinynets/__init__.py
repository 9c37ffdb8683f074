"""tinynets: small PyTorch models, each training with activation checkpointing in a form found in real projects."""
from .convmixer import TinyConvMixer
from .densenet import TinyDenseNet
from .encoder import TinyEncoderConfig, TinyEncoderForSequenceClassification
from .mixer import TinyMixer
from .mlp import Net
from .resnet import TinyResNet
from .trunk import DeepMLP

__all__ = [
    "DeepMLP",
    "Net",
    "TinyConvMixer",
    "TinyDenseNet",
    "TinyEncoderConfig",
    "TinyEncoderForSequenceClassification",
    "TinyMixer",
    "TinyResNet",
]
