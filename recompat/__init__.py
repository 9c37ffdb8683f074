"""recompat: move activation checkpointing between PyTorch and MindSpore, and prove the move."""

__version__ = "0.1.0"
