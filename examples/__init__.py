"""The example project that `make demo` translates: tiny PyTorch models that use activation checkpointing."""
