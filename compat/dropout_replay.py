"""Dropout with the same masks on both sides: how compare() judges a pair with active dropout.

torch and MindSpore draw dropout masks from different generators, so a pair in training mode with dropout differs
however right the port is. compare() therefore lets torch draw the masks and hands them to the other runs:

* **torch (float32) records.** ``torch.nn.functional.dropout`` (what ``nn.Dropout`` and multi-head attention
  call) is replaced for the run by one that draws its mask with ``bernoulli_`` from torch's generator and keeps
  it, in call order. A checkpointed region recomputed in backward draws the same mask again (torch restores the
  generator, ``preserve_rng_state``), so only the forward's calls are kept.
* **MindSpore and the float64 reference replay.** ``ops.Dropout`` (what ``nn.Dropout`` and ``ops.dropout`` run)
  and torch's dropout in the float64 twin take the recorded masks in the same call order, each scaled by its own
  side's keep probability (a port that reads ``p`` as ``keep_prob`` still differs). A recomputation in backward
  gets the mask its forward call got, matched by the input it is called on (bit for bit the same input).
* **MindSpore's own recompute stays as it is.** The primitive still draws, in the forward and in a recomputation,
  as in a real run; where MindSpore's recomputation draws another mask than its forward did (its own recompute
  does not always keep them, docs/behaviours.md), the recomputation runs with that new mask, as in a real run,
  and the gradients differ from torch's: replaying never hides what MindSpore really does.

What it cannot replay it leaves alone: ``Dropout2d``/``Dropout3d`` (channel masks), the dropout inside
``scaled_dot_product_attention``, GRAPH mode (the compiled graph draws its own). A port that calls dropout more
often than torch is an error naming the call; one that calls it less often fails the ``dropout`` row.
"""
from __future__ import annotations

import contextlib
import hashlib
from dataclasses import dataclass, field

import numpy as np


class DropoutReplayError(RuntimeError):
    """A side called dropout where torch did not: more calls, another shape, or a recomputation of an input the
    forward never saw."""


@dataclass
class MaskTape:
    """The dropout masks torch's forward drew, in call order, and what each replaying run took."""

    masks: list[np.ndarray] = field(default_factory=list)
    p: list[float] = field(default_factory=list)
    taken: dict[str, int] = field(default_factory=dict)       # replaying side -> forward calls served
    redrawn: dict[str, int] = field(default_factory=dict)     # replaying side -> recomputations with a new mask


@dataclass
class _Phase:
    """Whether a run is in its forward; calls outside it are recomputations in backward."""
    forward: bool = False

    @contextlib.contextmanager
    def during_forward(self):
        """Entered around a run's forward (runs.py's forward_context)."""
        self.forward = True
        try:
            yield
        finally:
            self.forward = False


def _digest(array: np.ndarray) -> str:
    return hashlib.blake2b(np.ascontiguousarray(array).tobytes() + str(array.shape).encode(), digest_size=16).hexdigest()


@contextlib.contextmanager
def recording(tape: MaskTape):
    """torch's float32 run: masks drawn from torch's generator and kept (forward calls only). Yields the run's
    phase (enter phase.during_forward() around the forward)."""
    import torch
    import torch.nn.functional as F

    phase = _Phase()
    original = F.dropout

    def dropout(input, p=0.5, training=True, inplace=False):
        if not training or p == 0.0:
            return original(input, p, training, inplace)
        mask = torch.empty_like(input).bernoulli_(1.0 - p)
        if phase.forward:
            tape.masks.append(mask.detach().cpu().numpy().astype(np.bool_))
            tape.p.append(float(p))
        return input * mask * (1.0 / (1.0 - p))

    F.dropout = dropout
    try:
        yield phase
    finally:
        F.dropout = original


class _Replayer:
    """Serves the tape in call order to one side's forward, and the same mask again to a recomputation of the
    same input."""

    def __init__(self, tape: MaskTape, side: str):
        self.tape, self.side, self.phase = tape, side, _Phase()
        self.seen: dict[str, tuple[np.ndarray | None, np.ndarray]] = {}    # input -> (own draw, torch's mask)
        tape.taken[side] = tape.redrawn[side] = 0

    def mask(self, x: np.ndarray, drawn: np.ndarray | None = None) -> np.ndarray:
        """torch's mask for this call. ``drawn``: the side's own draw for it; in a recomputation, a draw that
        differs from its forward's is what the side really computes with, and is returned instead."""
        key = _digest(x)
        if not self.phase.forward:
            if key not in self.seen:
                raise DropoutReplayError(f"{self.side} recomputed a dropout on an input its forward never passed "
                                         "to dropout: the recomputation differs from the forward")
            first, mask = self.seen[key]
            if drawn is not None and first is not None and not np.array_equal(drawn, first):
                self.tape.redrawn[self.side] += 1
                return drawn
            return mask
        n = self.tape.taken[self.side]
        if n >= len(self.tape.masks):
            raise DropoutReplayError(f"{self.side}'s forward calls dropout more often than torch's, which called it "
                                     f"{len(self.tape.masks)} time{'s' if len(self.tape.masks) != 1 else ''}: a "
                                     "dropout the torch model does not have")
        mask = self.tape.masks[n]
        if mask.shape != x.shape:
            raise DropoutReplayError(f"{self.side}'s dropout call {n + 1} is on a {x.shape} input; torch's call "
                                     f"{n + 1} was on {mask.shape}: the dropouts are in another order or place")
        self.tape.taken[self.side] = n + 1
        self.seen[key] = (drawn, mask)
        return mask


@contextlib.contextmanager
def replaying_torch(tape: MaskTape, side: str = "torch (float64 reference)"):
    """A torch run (the float64 twin) that takes torch's recorded masks. Yields the run's phase."""
    import torch
    import torch.nn.functional as F

    replay = _Replayer(tape, side)
    original = F.dropout

    def dropout(input, p=0.5, training=True, inplace=False):
        if not training or p == 0.0:
            return original(input, p, training, inplace)
        mask = replay.mask(input.detach().cpu().numpy())
        return input * torch.from_numpy(mask).to(device=input.device, dtype=input.dtype) * (1.0 / (1.0 - p))

    F.dropout = dropout
    try:
        yield replay.phase
    finally:
        F.dropout = original


@contextlib.contextmanager
def replaying_mindspore(tape: MaskTape, side: str = "MindSpore"):
    """A MindSpore PyNative run whose ops.Dropout takes torch's recorded masks. Yields the phase."""
    import mindspore
    from mindspore import ops

    from .checkpoint_on_mindspore import _no_grad

    replay = _Replayer(tape, side)
    own = ops.Dropout.__dict__.get("__call__")
    original = ops.Dropout.__call__

    def call(prim, x, *args, **kwargs):
        if args or kwargs:                         # not the known signature: leave it alone
            return original(prim, x, *args, **kwargs)
        with _no_grad():                           # the primitive draws as in a real run: its stream, its cache
            _, drawn = original(prim, x)
        mask = replay.mask(x.asnumpy(), drawn.asnumpy() != 0)
        mask = mindspore.Tensor(mask.astype(mindspore.dtype_to_nptype(x.dtype)))
        return x * (mask * (1.0 / prim.keep_prob)), mask

    ops.Dropout.__call__ = call
    try:
        yield replay.phase
    finally:
        if own is None:
            del ops.Dropout.__call__
        else:
            ops.Dropout.__call__ = own
