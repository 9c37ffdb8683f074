"""ReLU decisions on float32's edge: how the round-off rule survives a kink.

The round-off rule (compare.judge_by_reference) measures float32 round-off by torch's distance from a float64
run. That holds while all three runs take the same branches. ReLU is a branch: an input within round-off of 0 may
land on one side of 0 in one framework's float32 run and on the other in float64's, and then every gradient
upstream of it moves by O(1) (measured: torchvision's resnet18 against mindcv's in training mode fails on half of
the input seeds, one element of 400,000 at 4 ulps of its call's largest input decides it). That is chance, not a
port bug, and no tolerance can tell it from one. So each side is judged against a float64 run that took that
side's branches:

* **Both float32 runs record.** torch's ReLU inputs (``torch.relu``, ``torch.relu_``, ``F.relu``, ``F.relu_``,
  ``Tensor.relu``/``relu_``: what ``nn.ReLU`` calls) and MindSpore's ReLU decisions (the ReLU primitive, which
  ``nn.ReLU``, ``ops.relu`` and mint's relu run), forward calls in order; a recomputation in backward takes the
  forward's decision again and is not recorded.
* **The float64 run replays, only on the edge.** At forward call n, an element whose float64 decision differs
  from the side's takes the side's decision only where its float64 input is within the round-off rule's own
  allowance of 0 (``band``: ROUNDOFF_FACTOR times torch float32's largest distance from float64 at that call, plus
  FLOOR_ULPS ulps of the call's largest input). The reference along torch's branches measures the bands; a second
  float64 run along MindSpore's is made only where MindSpore decided otherwise than the first. torch is judged
  against the first, MindSpore against the second.
* **A decision far from 0 is never excused.** An element MindSpore decides otherwise beyond the band keeps
  float64's decision, and the ``kink`` row fails naming the first such call: the port's input to that ReLU
  differs, or its threshold does.

MindSpore's decisions are replayed all or nothing: when its forward calls the ReLU primitive another number of
times than torch's, or on other shapes (a ReLU spelled ``ops.maximum(x, 0)``, an in-place relu, a ReLU6), none
is, and the row says why. GRAPH mode compiles the primitive away: nothing to record there.
"""
from __future__ import annotations

import contextlib
from dataclasses import dataclass, field

import numpy as np

from .dropout_replay import Phase, _digest

TORCH, MINDSPORE = "torch", "MindSpore"


@dataclass
class Branches:
    """What each side's ReLUs decided, one array per forward call, and what the float64 runs made of it."""

    torch: list[np.ndarray] = field(default_factory=list)      # torch float32's ReLU inputs
    mindspore: list[np.ndarray] = field(default_factory=list)  # MindSpore's decisions (input > 0)
    bands: list[float] = field(default_factory=list)          # per call: how near 0 round-off may flip an input
    edge: int = 0     # MindSpore's decisions that differ from the float64 run along torch's within the band
    differ: dict[str, int] = field(default_factory=dict)       # side -> elements decided otherwise than float64
    forgiven: dict[str, int] = field(default_factory=dict)     # side -> of those, replayed (within the band)
    largest: dict[str, float] = field(default_factory=dict)    # side -> largest replayed |x| / the call's max |x|
    beyond: list[str] = field(default_factory=list)            # MindSpore's calls that differ beyond the band
    unreplayed: dict[str, str] = field(default_factory=dict)   # side -> why its decisions were not replayed

    def mindspore_aligned(self) -> str:
        """Why MindSpore's decisions cannot be replayed on the torch model's calls ("" when they can)."""
        t, m = [x.shape for x in self.torch], [d.shape for d in self.mindspore]
        if len(t) != len(m):
            return (f"MindSpore's forward ran the ReLU primitive {len(m)} time{'s' * (len(m) != 1)}, torch's ran "
                    f"ReLU {len(t)} time{'s' * (len(t) != 1)} (a ReLU spelled otherwise on one side: "
                    "ops.maximum, an in-place relu, ReLU6)")
        for n, (a, b) in enumerate(zip(t, m)):
            if a != b:
                return f"ReLU call {n + 1} is on {b} in MindSpore, on {a} in torch: the ReLUs are in another order"
        return ""

    def parted(self) -> bool:
        """Whether MindSpore's ReLUs decided otherwise than torch's float32 anywhere (before any float64 run)."""
        return not self.mindspore_aligned() and any(not np.array_equal(t > 0, m)
                                                    for t, m in zip(self.torch, self.mindspore))

    def needs_mindspore_run(self) -> bool:
        """Whether MindSpore decided otherwise than the float64 run along torch's within round-off of 0 (known
        after that run): then a float64 run along MindSpore's branches is what MindSpore is judged against."""
        return self.edge > 0


@contextlib.contextmanager
def _patched(owner, names: dict[str, object]):
    """Attributes of a module or class replaced for a run; an attribute the class inherited is deleted again."""
    missing = object()
    originals = {name: owner.__dict__.get(name, missing) for name in names}
    for name, function in names.items():
        setattr(owner, name, function)
    try:
        yield
    finally:
        for name, function in originals.items():
            if function is missing:
                delattr(owner, name)
            else:
                setattr(owner, name, function)


def _torch_relus(decide):
    """torch's ReLU entry points, each calling ``decide(x, original, inplace, args, kwargs)`` once per ReLU (the
    nested call F.relu makes to torch.relu is not counted again)."""
    import torch
    import torch.nn.functional as F

    busy = [False]

    def wrap(original, inplace):
        def relu(x, *args, **kwargs):
            if busy[0] or not isinstance(x, torch.Tensor):
                return original(x, *args, **kwargs)
            busy[0] = True
            try:
                flag = inplace if inplace is not None else bool(kwargs.get("inplace", args[0] if args else False))
                return decide(x, original, flag, args, kwargs)
            finally:
                busy[0] = False
        return relu

    return [
        (F, {"relu": wrap(F.relu, None), "relu_": wrap(F.relu_, True)}),
        (torch, {"relu": wrap(torch.relu, False), "relu_": wrap(torch.relu_, True)}),
        (torch.Tensor, {"relu": wrap(torch.Tensor.relu, False), "relu_": wrap(torch.Tensor.relu_, True)}),
    ]


@contextlib.contextmanager
def _patching(patches):
    with contextlib.ExitStack() as stack:
        for owner, names in patches:
            stack.enter_context(_patched(owner, names))
        yield


@contextlib.contextmanager
def recording_torch(branches: Branches):
    """torch's float32 run: each forward ReLU's input kept. Yields the run's phase."""
    phase = Phase()

    def decide(x, original, inplace, args, kwargs):
        if phase.forward:
            branches.torch.append(x.detach().cpu().numpy().astype(np.float32, copy=True))
        return original(x, *args, **kwargs)

    with _patching(_torch_relus(decide)):
        yield phase


@contextlib.contextmanager
def recording_mindspore(branches: Branches):
    """A MindSpore PyNative run: each forward call of the ReLU primitive's decisions kept. Yields the phase."""
    from mindspore.ops.auto_generate import gen_ops_prim

    phase = Phase()
    original = gen_ops_prim.ReLU.__call__

    def call(prim, x, *args, **kwargs):
        if phase.forward and not args and not kwargs:
            branches.mindspore.append(x.asnumpy() > 0)
        return original(prim, x, *args, **kwargs)

    with _patched(gen_ops_prim.ReLU, {"__call__": call}):
        yield phase
    branches.unreplayed[MINDSPORE] = branches.mindspore_aligned()


def band(x32: np.ndarray, x64: np.ndarray) -> float:
    """How near 0 float32 round-off may put an input of this call on the other side: the round-off rule's allowance
    (compare.judge_by_reference) for it, torch float32's own distance from float64 being the measure."""
    from .compare import _EPS, FLOOR_ULPS, ROUNDOFF_FACTOR

    scale = float(np.abs(x64).max(initial=0.0))
    return ROUNDOFF_FACTOR * float(np.abs(x32.astype(np.float64) - x64).max(initial=0.0)) \
        + FLOOR_ULPS * _EPS["float32"] * scale


def _against_mindspore(branches: Branches, n: int, x64: np.ndarray, chosen: np.ndarray, edge: np.ndarray) -> None:
    """Along torch's branches, call n: where MindSpore's decision differs, within the band (a second float64 run
    follows it) or beyond (the port's input or threshold differs there)."""
    differ = branches.mindspore[n] != chosen
    branches.differ[MINDSPORE] += int(differ.sum())
    branches.edge += int((differ & edge).sum())
    _far(branches, n, x64, differ & ~edge)


def _far(branches: Branches, n: int, x64: np.ndarray, far: np.ndarray) -> None:
    if far.any():
        count = int(far.sum())
        branches.beyond.append(f"call {n + 1} (shape {x64.shape}): {count} element{'s' * (count != 1)} up to "
                               f"|x| = {float(np.abs(x64[far]).max()):.3g}, where round-off reaches "
                               f"{branches.bands[n]:.3g}")


@contextlib.contextmanager
def replaying_torch(branches: Branches, side: str = TORCH):
    """A float64 torch run that takes ``side``'s decision where its own differs within the band of 0. Along torch's
    branches it measures each call's band and where MindSpore's decisions differ from its own (within the band:
    ``edge``; beyond: ``beyond``); along MindSpore's it uses the bands. Yields the run's phase."""
    import torch

    phase = Phase()
    decided: dict[str, object] = {}        # forward input -> the mask used (None: float64's own decisions)
    calls = [0]
    branches.differ[side] = branches.forgiven[side] = 0
    branches.largest[side] = 0.0
    branches.beyond.clear()       # along MindSpore's, where it went: it replaces what the first run saw
    if side == TORCH:
        branches.bands.clear()
        branches.differ[MINDSPORE] = branches.edge = 0
    recorded = branches.torch if side == TORCH else branches.mindspore

    def mask_for(x64: np.ndarray):
        n = calls[0]
        calls[0] += 1
        if n >= len(recorded) or recorded[n].shape != x64.shape:
            if not branches.unreplayed.get(side):
                branches.unreplayed[side] = (f"the float64 copy's ReLU call {n + 1} is not {side}'s (another "
                                             f"count or shape): {side}'s decisions not replayed from there on")
            return None
        if side == TORCH:
            branches.bands.append(band(recorded[n], x64))
        theirs = recorded[n] > 0 if side == TORCH else recorded[n]
        own, edge = x64 > 0, np.abs(x64) <= branches.bands[n]
        differ = own != theirs
        forgiven = differ & edge
        branches.differ[side] += int(differ.sum())
        branches.forgiven[side] += int(forgiven.sum())
        if forgiven.any():
            scale = float(np.abs(x64).max())
            branches.largest[side] = max(branches.largest[side], float(np.abs(x64[forgiven]).max()) / scale)
        chosen = np.where(forgiven, theirs, own)
        if side == TORCH and not branches.unreplayed.get(MINDSPORE) and n < len(branches.mindspore):
            _against_mindspore(branches, n, x64, chosen, edge)
        elif side != TORCH:
            _far(branches, n, x64, differ & ~edge)
        return chosen if forgiven.any() else None

    def decide(x, original, inplace, args, kwargs):
        x64 = x.detach().cpu().numpy()
        if phase.forward:
            mask = decided[_digest(x64)] = mask_for(x64)
        else:                                   # a recomputation: what the forward decided on this input
            mask = decided.get(_digest(x64))
        if mask is None:
            return original(x, *args, **kwargs)
        keep = torch.from_numpy(mask).to(x.device)
        return x.masked_fill_(~keep, 0.0) if inplace else torch.where(keep, x, torch.zeros((), dtype=x.dtype,
                                                                                           device=x.device))

    with _patching(_torch_relus(decide)):
        yield phase
    if not branches.unreplayed.get(side) and calls[0] != len(recorded):
        branches.unreplayed[side] = (f"the float64 copy ran ReLU {calls[0]} times, {side} {len(recorded)}: "
                                     f"{side}'s decisions not replayed")
