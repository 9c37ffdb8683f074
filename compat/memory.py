"""How much a forward pass keeps for backward: the memory that recompute exists to save.

Both frameworks expose saved-tensor hooks (torch.autograd.graph.saved_tensors_hooks; MindSpore's
saved_tensors_hooks, PyNative only): every tensor autograd keeps for backward passes through the
pack hook. Their bytes, counted once per storage, are "bytes kept for backward". The measure is
exact for what autograd saves and portable across devices (unlike a CPU process's RSS, which
moves with allocator caching). It does not see tensors a custom backward keeps by itself, such as
the inputs MindSpore's reentrant recompute stashes (one set per recomputed block).

Count the forward only: recomputation in backward saves tensors again, briefly, and those must
not be charged to the forward.

    counter = SavedTensors("torch")
    with counter:
        loss = model(x).sum()
    loss.backward()
    counter.bytes
"""
from __future__ import annotations

import contextlib

MEASURE = "bytes of tensors saved for backward by the forward pass (saved-tensor hooks, unique storages)"


class SavedTensors:
    """Context manager counting what autograd saves for backward while it is active."""

    def __init__(self, framework: str):
        if framework not in ("torch", "mindspore"):
            raise ValueError(f"framework must be 'torch' or 'mindspore', not {framework!r}")
        self.framework = framework
        self.storages: dict[int, int] = {}
        self.tensors = 0
        self._hooks = None

    @property
    def bytes(self) -> int:
        return sum(self.storages.values())

    def _pack(self, t):
        self.tensors += 1
        if self.framework == "torch":
            storage = t.untyped_storage()
            self.storages[storage.data_ptr()] = storage.nbytes()
        else:
            self.storages[t.data_ptr()] = t.nbytes
        return t

    def __enter__(self):
        if self.framework == "torch":
            import torch

            self._hooks = torch.autograd.graph.saved_tensors_hooks(self._pack, _identity)
        else:
            import mindspore

            self._hooks = mindspore.saved_tensors_hooks(self._pack, _identity)
        self._hooks.__enter__()
        return self

    def __exit__(self, *exc):
        return self._hooks.__exit__(*exc)


def _identity(t):
    return t


@contextlib.contextmanager
def mindspore_recompute_off():
    """``mindspore.recompute(block, *args, ...)`` calls ``block(*args)`` while it is active: a model that calls it
    unconditionally measured as it keeps without recompute. Its own keywords (use_reentrant, early_stop, ...: the
    keyword-only parameters of its signature) are dropped, the rest go to the block, as recompute passes them."""
    import inspect

    import mindspore

    original = mindspore.recompute
    own = {n for n, p in inspect.signature(original).parameters.items() if p.kind is p.KEYWORD_ONLY}

    def direct(block, *args, **kwargs):
        return block(*args, **{k: v for k, v in kwargs.items() if k not in own})

    mindspore.recompute = direct
    try:
        yield
    finally:
        mindspore.recompute = original
