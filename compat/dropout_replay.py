"""Dropout with the same masks on both sides: how compare() judges a pair with active dropout.

torch and MindSpore draw dropout masks from different generators, so a pair in training mode with dropout differs
however right the port is. compare() therefore lets torch draw the masks and hands them to the other runs:

* **torch (float32) records.** ``torch.nn.functional.dropout`` (what ``nn.Dropout`` and multi-head attention
  call) is replaced for the run by one that draws its mask with ``bernoulli_`` from torch's generator and keeps
  it, in call order, in the forward and in a checkpointed region's recomputation in backward (the same mask
  again, as torch restores the generator; another with ``preserve_rng_state=False``, which the row reports).
* **MindSpore and the float64 reference replay.** ``ops.Dropout`` (what ``nn.Dropout`` and ``ops.dropout`` run)
  and torch's dropout in the float64 twin take the forward's masks in the same call order, each scaled by its own
  side's keep probability (a port that reads ``p`` as ``keep_prob`` still differs). The twin's recomputation takes
  torch's recomputation's masks in order (it follows torch step by step); MindSpore's recomputation gets the mask
  its forward call got, matched by the input it is called on (bit for bit the same input) and, among calls on one
  input, by MindSpore's own draw.
* **MindSpore's own recompute stays as it is.** The primitive still draws, in the forward and in a recomputation,
  as in a real run; where MindSpore's recomputation draws another mask than its forward did (its own recompute
  does not always keep them, docs/behaviours.md), the recomputation runs with that new mask, as in a real run,
  and the gradients differ from torch's: replaying never hides what MindSpore really does.

Channel dropout (``Dropout1d/2d/3d``: torch's ``F.dropout1d/2d/3d``, MindSpore's ``ops.Dropout2D/3D``) is replayed
the same way: torch draws one value per (sample, channel), kept spread over the input's shape. What it cannot
replay it leaves alone: channel dropout on an input without a batch axis and the alpha dropouts (the row
names them and fails: their masks differ between the frameworks), the dropout inside
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
    """The dropout masks torch's forward drew, in call order, those its recomputation in backward drew, and what
    each replaying run did with them."""

    masks: list[np.ndarray] = field(default_factory=list)
    p: list[float] = field(default_factory=list)
    channel: list[bool] = field(default_factory=list)          # per forward mask: drawn per (sample, channel)
    recomputed: list[np.ndarray] = field(default_factory=list)  # torch's recomputation's masks, in call order
    taken: dict[str, int] = field(default_factory=dict)       # side -> forward calls served
    redrawn: dict[str, int] = field(default_factory=dict)     # side -> recomputations with another mask
    unreplayed: list[str] = field(default_factory=list)       # torch dropouts whose masks are not replayed


@dataclass
class Phase:
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


class _Seen:
    """A run's forward dropout calls by input (bit for bit): what a recomputation of the same input is matched
    with. Among calls on equal inputs (two dropouts of one tensor), the one whose own draw the recomputation draws
    again."""

    def __init__(self):
        self.calls: dict[str, list[tuple[np.ndarray, np.ndarray]]] = {}   # input -> [(own draw, mask used)]

    def add(self, x: np.ndarray, drawn: np.ndarray, mask: np.ndarray) -> None:
        self.calls.setdefault(_digest(x), []).append((drawn, mask))

    def match(self, x: np.ndarray, drawn: np.ndarray, side: str) -> np.ndarray | None:
        """The mask the forward call with this input and this own draw used; None when the recomputation drew
        another mask than every forward call on this input."""
        calls = self.calls.get(_digest(x))
        if not calls:
            raise DropoutReplayError(f"{side} recomputed a dropout on an input its forward never passed to dropout: "
                                     "the recomputation differs from the forward")
        return next((mask for first, mask in calls if np.array_equal(first, drawn)), None)


def _digest(array: np.ndarray) -> str:
    data = np.ascontiguousarray(array).tobytes() + str(array.shape).encode()
    return hashlib.blake2b(data, digest_size=16).hexdigest()


# torch's channel dropouts: the input's rank with a batch axis (another rank is noted, not replayed)
_CHANNEL_RANKS = {"dropout1d": 3, "dropout2d": 4, "dropout3d": 5}
# torch's dropouts with another formula: noted, not replayed
_UNREPLAYED = ("alpha_dropout", "feature_alpha_dropout")


@contextlib.contextmanager
def recording(tape: MaskTape):
    """torch's float32 run: masks drawn from torch's generator and kept, the forward's and the recomputation's
    (torch restores the generator, so they are the same unless preserve_rng_state=False). Yields the run's phase
    (enter phase.during_forward() around the forward)."""
    import torch
    import torch.nn.functional as F

    phase, seen = Phase(), _Seen()
    tape.redrawn["torch"] = 0
    originals = {name: getattr(F, name) for name in ("dropout", *_CHANNEL_RANKS, *_UNREPLAYED)}

    def dropout(input, p=0.5, training=True, inplace=False, name="dropout"):
        if not training or p == 0.0 or p >= 1.0:
            return originals[name](input, p, training, inplace)
        if name == "dropout":
            mask = torch.empty_like(input).bernoulli_(1.0 - p)
        else:   # one draw per (sample, channel), spread over the input
            mask = input.new_empty(input.shape[:2] + (1,) * (input.dim() - 2)).bernoulli_(1.0 - p).expand_as(input)
        kept = mask.detach().cpu().numpy().astype(np.bool_)
        if phase.forward:
            tape.masks.append(kept)
            tape.p.append(float(p))
            tape.channel.append(name != "dropout")
            seen.add(input.detach().cpu().numpy(), kept, kept)
        else:
            tape.recomputed.append(kept)
            tape.redrawn["torch"] += seen.match(input.detach().cpu().numpy(), kept, "torch") is None
        scale = mask * (1.0 / (1.0 - p))
        return input.mul_(scale) if inplace else input * scale

    def noted(name):
        def call(input, p=0.5, training=True, inplace=False):
            if training and p > 0.0 and phase.forward:
                tape.unreplayed.append(f"torch.nn.functional.{name}")
            return originals[name](input, p, training, inplace)
        return call

    def channel(name):
        def call(input, p=0.5, training=True, inplace=False):
            if input.dim() != _CHANNEL_RANKS[name]:
                return noted(name)(input, p, training, inplace)
            return dropout(input, p, training, inplace, name=name)
        return call

    F.dropout = dropout
    for name in _CHANNEL_RANKS:
        setattr(F, name, channel(name))
    for name in _UNREPLAYED:
        setattr(F, name, noted(name))
    try:
        yield phase
    finally:
        for name, function in originals.items():
            setattr(F, name, function)


class _Replayer:
    """Serves torch's forward masks in call order to one side's forward. A recomputation gets what its forward
    call got (matched by input), or the side's own new draw where the side really draws another mask (MindSpore's
    own recompute), or, for a side that follows torch step by step (the float64 twin), what torch's recomputation
    drew, in order."""

    def __init__(self, tape: MaskTape, side: str):
        self.tape, self.side, self.phase, self.seen = tape, side, Phase(), _Seen()
        self.recomputations = 0
        tape.taken[side] = tape.redrawn[side] = 0

    def mask(self, x: np.ndarray, drawn: np.ndarray | None = None, channel: bool = False) -> np.ndarray:
        """The mask for this call. ``drawn``: the side's own draw for it (its forward's and its recomputation's
        are compared); a side without one (the float64 twin) follows torch's recomputation. ``channel``: the
        side's dropout draws per channel (torch's call must have too)."""
        if not self.phase.forward:
            if drawn is None:
                n, self.recomputations = self.recomputations, self.recomputations + 1
                if n >= len(self.tape.recomputed):
                    raise DropoutReplayError(f"{self.side} recomputes dropout more often than torch did")
                return self.tape.recomputed[n]
            try:
                mask = self.seen.match(x, drawn, self.side)
            except DropoutReplayError:
                if not self.tape.redrawn[self.side]:
                    raise
                mask = None                       # an input an earlier new mask changed: it follows the side too
            if mask is None:                      # the side really recomputes with a new mask: so does the replay
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
        if self.tape.channel[n] != channel:
            kinds = {True: "per channel (Dropout1d/2d/3d)", False: "per element (Dropout)"}
            raise DropoutReplayError(f"{self.side}'s dropout call {n + 1} draws {kinds[channel]}; torch's call "
                                     f"{n + 1} drew {kinds[self.tape.channel[n]]}: another kind of dropout")
        self.tape.taken[self.side] = n + 1
        if drawn is not None:                     # a side without its own draw never looks its forward up
            self.seen.add(x, drawn, mask)
        return mask


@contextlib.contextmanager
def replaying_torch(tape: MaskTape, side: str = "torch (float64 reference)"):
    """A torch run (the float64 twin) that takes torch's recorded masks. Yields the run's phase."""
    import torch
    import torch.nn.functional as F

    replay = _Replayer(tape, side)
    originals = {name: getattr(F, name) for name in ("dropout", *_CHANNEL_RANKS)}

    def replayed(name):
        def dropout(input, p=0.5, training=True, inplace=False):
            if not training or p == 0.0 or p >= 1.0 or input.dim() != _CHANNEL_RANKS.get(name, input.dim()):
                return originals[name](input, p, training, inplace)
            mask = replay.mask(input.detach().cpu().numpy(), channel=name != "dropout")
            scale = torch.from_numpy(mask).to(device=input.device, dtype=input.dtype) * (1.0 / (1.0 - p))
            return input.mul_(scale) if inplace else input * scale
        return dropout

    for name in originals:
        setattr(F, name, replayed(name))
    try:
        yield replay.phase
    finally:
        for name, function in originals.items():
            setattr(F, name, function)


@contextlib.contextmanager
def replaying_mindspore(tape: MaskTape, side: str = "MindSpore"):
    """A MindSpore PyNative run whose ops.Dropout takes torch's recorded masks. Yields the phase."""
    import mindspore
    from mindspore import ops

    from .checkpoint_on_mindspore import _no_grad

    replay = _Replayer(tape, side)
    primitives = (ops.Dropout, ops.Dropout2D, ops.Dropout3D)   # elementwise, and per channel
    own = {cls: cls.__dict__.get("__call__") for cls in primitives}

    def replayed(original, channel: bool):
        def call(prim, x, *args, **kwargs):
            if args or kwargs or prim.keep_prob >= 1.0:   # another signature, or p == 0 (torch draws nothing)
                return original(prim, x, *args, **kwargs)
            with _no_grad():                       # the primitive draws as in a real run: its stream, its cache
                _, drawn = original(prim, x)
            mask = replay.mask(x.asnumpy(), drawn.asnumpy() != 0, channel)
            mask = mindspore.Tensor(mask.astype(mindspore.dtype_to_nptype(x.dtype)))
            return x * (mask * (1.0 / prim.keep_prob)), mask
        return call

    for cls in primitives:
        cls.__call__ = replayed(cls.__call__, channel=cls is not ops.Dropout)
    try:
        yield replay.phase
    finally:
        for cls, call in own.items():
            if call is None:
                del cls.__call__
            else:
                cls.__call__ = call
