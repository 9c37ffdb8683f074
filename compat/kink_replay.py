"""Decisions on float32's edge: how the round-off rule survives a kink (a ReLU, a ReLU6, a LeakyReLU, a max-pool).

The round-off rule (compare.judge_by_reference) measures float32 round-off by torch's distance from a float64
run. That holds while all three runs take the same branches. A ReLU is a branch: an input within round-off of 0
may land on one side of 0 in one framework's float32 run and on the other in float64's (a ReLU6 has a second kink,
at 6). So is a max-pool: two
values of one window within round-off of each other may be ordered otherwise, and the gradient goes to the other
element. Either way every gradient upstream moves by O(1) (measured: torchvision's resnet18 against mindcv's fails
on 5 of 8 input seeds in training mode, one ReLU input of 400,000 at 4 ulps of its call's largest decides it; one
stem max-pool window whose two largest values are 2 ulps apart fails another). That is chance, not a port bug, and
no tolerance can tell it from one. So each side is judged against a float64 run that took that side's branches:

* **Both float32 runs record.** torch's ReLU inputs (``torch.relu``, ``torch.relu_``, ``F.relu``, ``F.relu_``,
  ``Tensor.relu``/``relu_``: what ``nn.ReLU`` calls), its ReLU6 inputs (``F.relu6``, and ``F.hardtanh`` between 0
  and 6: what ``nn.ReLU6`` calls), its LeakyReLU inputs (``F.leaky_relu``, ``F.leaky_relu_``: what
  ``nn.LeakyReLU`` calls; below 0 the output is the slope times x, not a constant) and its 2-d max-pools' inputs
  and picks (``F.max_pool2d``, what ``nn.MaxPool2d`` calls); MindSpore's ReLU and ReLU6 decisions (the ReLU
  primitive, which ``nn.ReLU``, ``ops.relu`` and mint's relu run; the ReLU6 primitive, ``nn.ReLU6``'s and
  ``ops.relu6``'s), its LeakyReLU decisions (``ops.leaky_relu``, what ``nn.LeakyReLU`` calls)
  and max-pool picks (``MaxPool3DWithArgmax``, which ``nn.MaxPool2d(pad_mode="pad")`` runs). A clamp's decision is
  each element's segment (``segments``: below, between or above its kinks).
  Forward calls in order; a recomputation in backward takes its forward call's decision again.
* **The float64 run replays, only on the edge.** At forward call n, a decision of float64's that differs from the
  side's takes the side's only where the side's is within the round-off rule's own allowance of the kink
  (``band``: ROUNDOFF_FACTOR times torch float32's largest distance from float64 at that call's input, plus
  FLOOR_ULPS ulps of its largest value): a ReLU input that near 0 (a ReLU6 input that near 0 or 6), a picked value
  that near its window's max. The
  run along torch's branches measures the bands; a second float64 run along MindSpore's is made only where
  MindSpore decided otherwise than the first within them. torch is judged against the first, MindSpore against
  the second.
* **A decision far from the kink is never excused.** One MindSpore takes otherwise beyond the band keeps
  float64's, and the ``kink`` row fails naming the first such call: the port's input there differs, or its op
  does (a ReLU's threshold, a pooling window).

MindSpore's decisions of a kind are replayed all or nothing: when its forward runs the primitive another number
of times than torch's, or on other shapes (a ReLU spelled ``ops.maximum(x, 0)``, an in-place relu, a ReLU6 spelled
``ops.clamp``; a
max-pool with pad_mode "same" or "valid", which runs ``ops.MaxPool`` and gives no argmax), none is, and the row
says why. GRAPH mode compiles the primitives away: nothing to record there.
"""
from __future__ import annotations

import contextlib
from dataclasses import dataclass, field

import numpy as np

from .dropout_replay import Phase, _digest

TORCH, MINDSPORE = "torch", "MindSpore"
RELU, RELU6, LEAKY_RELU, MAX_POOL = "ReLU", "ReLU6", "LeakyReLU", "max-pool"
KINDS = (RELU, RELU6, LEAKY_RELU, MAX_POOL)
# the clamps: (low, high) (None: no upper kink). A decision is an element's segment: 0 at or below low (the output
# is low, no gradient; a LeakyReLU's is its slope times x), 1 between (x and its gradient pass), 2 at or above high
CLAMPS = {RELU: (0.0, None), RELU6: (0.0, 6.0), LEAKY_RELU: (0.0, None)}
LEAKY_SLOPE = 0.01      # torch's default negative_slope (F.leaky_relu, nn.LeakyReLU)
# MindSpore's LeakyReLU is maximum(alpha * x, x): at exactly 0 the two tie and its gradient is (1 + alpha) / 2
# (measured 0.505 for alpha 0.01; torch's is the slope, tests/test_framework_facts.py): a segment of its own there.
# An exact 0 that float64 holds too (after a ReLU, a dropout, padding) is replayed like a decision within round-off:
# the gradient upstream of such a 0 is blocked there in the cases seen (ReLU, dropout), so it changes nothing
TIE = 3
# what a decision's gap is measured from, and how one side may call an op without the recorded primitive
_FROM = {RELU: "0", RELU6: "0 or 6", LEAKY_RELU: "0", MAX_POOL: "its window's max"}
# a decision taken across its kink, as the kink row counts them (one, many)
NOUNS = {RELU: ("ReLU input across 0", "ReLU inputs across 0"),
         RELU6: ("ReLU6 input across 0 or 6", "ReLU6 inputs across 0 or 6"),
         LEAKY_RELU: ("LeakyReLU input across 0", "LeakyReLU inputs across 0"),
         MAX_POOL: ("max-pool pick among near-equal values", "max-pool picks among near-equal values")}
_ELSEWISE = {RELU: "a ReLU spelled otherwise on one side: ops.maximum, an in-place relu",
             RELU6: "a ReLU6 spelled otherwise on one side: ops.clamp, ops.hardtanh, torch.clamp",
             LEAKY_RELU: "a LeakyReLU spelled otherwise on one side: mint's leaky_relu, ops.maximum(alpha * x, x)",
             MAX_POOL: "a max-pool MindSpore runs without its argmax: pad_mode 'same' or 'valid', mint's max_pool2d"}


def segments(x: np.ndarray, kind: str) -> np.ndarray:
    """Each element's segment of a clamp (CLAMPS): 0 at or below its low kink, 1 between, 2 at or above its high."""
    low, high = CLAMPS[kind]
    seg = (x > low).astype(np.int8)
    if high is not None:
        seg[x >= high] = 2
    return seg


def _kink_gap(x: np.ndarray, kind: str) -> np.ndarray:
    """How far each element is from its clamp's nearest kink."""
    low, high = CLAMPS[kind]
    gap = np.abs(x - low)
    return gap if high is None else np.minimum(gap, np.abs(x - high))


def _per_kind(make):
    return field(default_factory=lambda: {kind: make() for kind in KINDS})


@dataclass
class Branches:
    """What each side decided at its kinks, per kind (ReLU and ReLU6 segments, max-pool picks), one array per forward
    call, and what the float64 runs made of it."""

    torch: dict[str, list[tuple[np.ndarray, np.ndarray]]] = _per_kind(list)  # (float32 input, decision) per call
    mindspore: dict[str, list[np.ndarray]] = _per_kind(list)                 # MindSpore's decisions per call
    bands: dict[str, list[float]] = _per_kind(list)      # per call: how far round-off may move a decision's gap
    edge: int = 0     # MindSpore's decisions that differ from the float64 run along torch's within the band
    differ: dict[str, int] = field(default_factory=dict)       # side -> decisions other than float64's
    forgiven: dict[str, dict[str, int]] = field(default_factory=dict)   # side -> kind -> replayed (in the band)
    largest: dict[str, float] = field(default_factory=dict)    # side -> largest replayed gap / the call's max |x|
    beyond: list[str] = field(default_factory=list)            # MindSpore's calls that differ beyond the band
    unreplayed: dict[str, str] = field(default_factory=dict)   # "side kind" -> why its decisions were not replayed
    unreadable: dict[str, str] = field(default_factory=dict)   # kind -> why torch's float32 run could not record it

    def calls(self) -> str:
        """'17 ReLU calls, 1 max-pool call' (torch's forward)."""
        counts = [(len(self.torch[kind]), kind) for kind in KINDS if self.torch[kind] or self.mindspore[kind]]
        return ", ".join(f"{n} {kind} call{'s' * (n != 1)}" for n, kind in counts)

    def mindspore_aligned(self, kind: str) -> str:
        """Why MindSpore's decisions of this kind cannot be replayed on the torch model's calls ("" when they
        can): another count, another shape, or another order (a call whose decisions agree better with another
        of torch's calls of the same shape than with its own: the sides run them in another order)."""
        if self.unreadable.get(kind):
            return self.unreadable[kind]
        t, m = [d for _, d in self.torch[kind]], self.mindspore[kind]
        if len(t) != len(m):
            return (f"MindSpore's forward ran the {kind} primitive {len(m)} time{'s' * (len(m) != 1)}, torch's ran "
                    f"{kind} {len(t)} time{'s' * (len(t) != 1)} ({_ELSEWISE[kind]})")
        for n, (a, b) in enumerate(zip(t, m)):
            if a.shape != b.shape:
                return f"{kind} call {n + 1} gives {b.shape} in MindSpore, {a.shape} in torch: another order"
            own = int((a == b).sum())
            if any(other.shape == b.shape and int((other == b).sum()) > own for other in t):
                return (f"MindSpore's {kind} call {n + 1} decides more alike another of torch's calls than torch's "
                        f"call {n + 1}: the sides run their {kind}s in another order")
        return ""

    def aligned(self, kind: str) -> bool:
        return not self.unreplayed.get(f"{MINDSPORE} {kind}") and not self.unreadable.get(kind)

    def parted(self) -> bool:
        """Whether MindSpore decided otherwise than torch's float32 anywhere (before any float64 run)."""
        return any(self.aligned(kind) and any(not np.array_equal(d, m) for (_, d), m
                                              in zip(self.torch[kind], self.mindspore[kind]))
                   for kind in KINDS)

    def flipped(self, side: str) -> int:
        """How many of ``side``'s decisions the float64 run along its branches took from it."""
        return sum(self.forgiven.get(side, {}).values())

    def needs_mindspore_run(self) -> bool:
        """Whether MindSpore decided otherwise than the float64 run along torch's within round-off (known after
        that run): then a float64 run along MindSpore's branches is what MindSpore is judged against."""
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


class _Unreadable(Exception):
    """A tensor whose values cannot be read here (no storage under torch.func, a fake tensor): not recorded."""


def _numpy(t) -> np.ndarray:
    """A tensor's values; a dtype NumPy lacks (bfloat16) as float32, which holds it exactly."""
    import torch

    t = t.detach()
    if t.dtype.is_floating_point and t.dtype not in (torch.float16, torch.float32, torch.float64):
        t = t.float()
    try:
        return t.cpu().numpy()
    except (RuntimeError, TypeError) as err:
        raise _Unreadable(f"{type(err).__name__}: {err}") from err


def _torch_kinks(clamp, max_pool):
    """torch's entry points to its kinks, patched: ``clamp(kind, x, original, inplace, args, kwargs)`` once per ReLU
    (the call F.relu makes to torch.relu is not counted again), ReLU6 (F.relu6, and F.hardtanh between 0 and 6:
    what nn.ReLU6 calls) and LeakyReLU (F.leaky_relu, F.leaky_relu_: what nn.LeakyReLU calls),
    ``max_pool(x, args, kwargs, return_indices)`` once per 2-d max-pool
    (``max_pool2d_with_indices(x, *args, **kwargs)`` computes it)."""
    import torch
    import torch.nn.functional as F

    busy = [False]

    def once(function):
        def call(*args, **kwargs):
            if not args and "input" not in kwargs:
                return function.original(*args, **kwargs)
            x, args = (args[0], args[1:]) if args else (kwargs.pop("input"), args)
            if busy[0] or not isinstance(x, torch.Tensor):
                return function.original(x, *args, **kwargs)
            busy[0] = True
            try:
                return function(x, *args, **kwargs)
            finally:
                busy[0] = False
        return call

    def relu_entry(original, inplace, kind=RELU):
        def entry(x, *args, **kwargs):
            flag = inplace if inplace is not None else bool(kwargs.get("inplace", args[0] if args else False))
            return clamp(kind, x, original, flag, args, kwargs)
        entry.original = original
        return once(entry)

    def leaky_entry(original, inplace):
        def entry(x, *args, **kwargs):
            flag = inplace or bool(kwargs.get("inplace", args[1] if len(args) > 1 else False))
            return clamp(LEAKY_RELU, x, original, flag, args, kwargs)
        entry.original = original
        return once(entry)

    def hardtanh_entry(x, *args, **kwargs):
        given = dict(zip(("min_val", "max_val", "inplace"), args), **kwargs)
        if (given.get("min_val", -1.0), given.get("max_val", 1.0)) != CLAMPS[RELU6]:
            return hardtanh_entry.original(x, *args, **kwargs)  # another hardtanh: not a kink MindSpore records
        return clamp(RELU6, x, hardtanh_entry.original, bool(given.get("inplace", False)), args, kwargs)
    hardtanh_entry.original = F.hardtanh

    def pool_entry(x, *args, return_indices=False, **kwargs):
        if len(args) > 5:                      # return_indices given by position
            args, return_indices = args[:5] + args[6:], args[5]
        return max_pool(x, args, kwargs, bool(return_indices))
    pool_entry.original = F.max_pool2d

    return [
        (F, {"relu": relu_entry(F.relu, None), "relu_": relu_entry(F.relu_, True), "max_pool2d": once(pool_entry),
             "relu6": relu_entry(F.relu6, None, RELU6), "hardtanh": once(hardtanh_entry),
             "leaky_relu": leaky_entry(F.leaky_relu, False), "leaky_relu_": leaky_entry(F.leaky_relu_, True)}),
        (torch, {"relu": relu_entry(torch.relu, False), "relu_": relu_entry(torch.relu_, True)}),
        (torch.Tensor, {"relu": relu_entry(torch.Tensor.relu, False), "relu_": relu_entry(torch.Tensor.relu_, True)}),
    ]


def _pool_with_indices(x, args, kwargs):
    import torch.nn.functional as F

    return F.max_pool2d_with_indices(x, *args, **{**kwargs, "return_indices": True})


@contextlib.contextmanager
def _patching(patches):
    with contextlib.ExitStack() as stack:
        for owner, names in patches:
            stack.enter_context(_patched(owner, names))
        yield


@contextlib.contextmanager
def recording_torch(branches: Branches):
    """torch's float32 run: each forward ReLU's, ReLU6's and max-pool's input and decision kept. Yields the run's
    phase."""
    phase = Phase()

    def keep(kind, read):
        if phase.forward and not branches.unreadable.get(kind):
            try:
                branches.torch[kind].append(read())
            except _Unreadable as err:
                branches.unreadable[kind] = f"torch's {kind} inputs could not be read ({err}): not replayed"

    def clamp(kind, x, original, inplace, args, kwargs):
        def read():
            x32 = _numpy(x).astype(np.float32, copy=True)
            return x32, segments(x32, kind)
        keep(kind, read)
        return original(x, *args, **kwargs)

    def max_pool(x, args, kwargs, return_indices):
        out, picks = _pool_with_indices(x, args, kwargs)
        if x.dim() == 4:
            keep(MAX_POOL, lambda: (_numpy(x).astype(np.float32), _numpy(picks)))
        elif phase.forward:
            branches.unreadable[MAX_POOL] = (f"a max-pool on a {x.dim()}-d input (not N, C, H, W): the max-pool "
                                             "picks are not replayed")
        return (out, picks) if return_indices else out

    with _patching(_torch_kinks(clamp, max_pool)):
        yield phase


@contextlib.contextmanager
def recording_mindspore(branches: Branches):
    """A MindSpore PyNative run: the ReLU and ReLU6 primitives' decisions, ops.leaky_relu's (what nn.LeakyReLU
    calls: a maximum of alpha * x and x, no primitive of its own) and MaxPool3DWithArgmax's picks (what
    nn.MaxPool2d with pad_mode="pad" runs, on an axis of 1 inserted) in each forward call. Yields the phase."""
    import mindspore
    from mindspore.ops.auto_generate import gen_ops_prim
    from mindspore.ops.operations import nn_ops

    phase = Phase()
    pool_call = nn_ops.MaxPool3DWithArgmax.__call__

    def clamp(kind, primitive):
        call = primitive.__call__

        def recorded(prim, x, *args, **kwargs):
            if phase.forward and not args and not kwargs:
                branches.mindspore[kind].append(segments(x.asnumpy(), kind))
            return call(prim, x, *args, **kwargs)
        return recorded

    def max_pool(prim, x, *args, **kwargs):
        out = pool_call(prim, x, *args, **kwargs)
        if phase.forward and isinstance(out, tuple) and len(out) == 2:
            picks = out[1].asnumpy()
            branches.mindspore[MAX_POOL].append(picks[:, :, 0] if picks.ndim == 5 and picks.shape[2] == 1
                                                else picks)
        return out

    def leaky_relu(input, alpha=0.2):        # noqa: A002 - MindSpore's own parameter names
        if phase.forward and 0 <= alpha < 1:     # maximum(alpha * x, x) picks x where x > 0, ties at 0
            values = input.asnumpy()
            seg = segments(values, LEAKY_RELU)
            seg[values == 0] = TIE
            branches.mindspore[LEAKY_RELU].append(seg)
        return ops_leaky_relu(input, alpha)
    ops_leaky_relu = mindspore.ops.leaky_relu

    with _patched(gen_ops_prim.ReLU, {"__call__": clamp(RELU, gen_ops_prim.ReLU)}), \
            _patched(gen_ops_prim.ReLU6, {"__call__": clamp(RELU6, gen_ops_prim.ReLU6)}), \
            _patched(mindspore.ops, {"leaky_relu": leaky_relu}), \
            _patched(nn_ops.MaxPool3DWithArgmax, {"__call__": max_pool}):
        yield phase
    for kind in KINDS:
        branches.unreplayed[f"{MINDSPORE} {kind}"] = branches.mindspore_aligned(kind)


def band(x32: np.ndarray, x64: np.ndarray) -> np.ndarray:
    """How far float32 round-off may move a decision's gap at this call (an input from 0, a max from the runner-up),
    per channel (axis 1: a feature, a conv channel; one large channel does not widen the others'): the round-off
    rule's allowance (compare.judge_by_reference) for the call's input there, torch float32's own distance from
    float64 being the measure. Broadcasts against the input and against a max-pool's output."""
    from .compare import _EPS, FLOOR_ULPS, ROUNDOFF_FACTOR

    axes = tuple(a for a in range(x64.ndim) if a != 1) if x64.ndim > 1 else None
    keep = x64.ndim > 1
    dev = np.abs(x32.astype(np.float64) - x64).max(axis=axes, keepdims=keep, initial=0.0)
    scale = np.abs(x64).max(axis=axes, keepdims=keep, initial=0.0)
    return ROUNDOFF_FACTOR * dev + FLOOR_ULPS * _EPS["float32"] * scale


def _pick(x64: np.ndarray, picks: np.ndarray) -> np.ndarray:
    """The input values a max-pool's picks (flat indices over each channel's plane) point at."""
    flat = x64.reshape(*x64.shape[:2], -1)
    return np.take_along_axis(flat, picks.reshape(*picks.shape[:2], -1), axis=2).reshape(picks.shape)


class _Choices:
    """The float64 run's decisions at its kinks: its own, or the side's where they differ within the band."""

    def __init__(self, branches: Branches, side: str):
        self.branches, self.side = branches, side
        self.calls = dict.fromkeys(KINDS, 0)
        b = branches
        b.differ[side] = 0
        b.forgiven[side] = dict.fromkeys(KINDS, 0)
        b.largest[side] = 0.0
        b.beyond.clear()             # along MindSpore's, where it went: it replaces what the first run saw
        if side == TORCH:
            for kind in KINDS:
                b.bands[kind].clear()
            b.differ[MINDSPORE] = b.edge = 0

    def choose(self, kind: str, x64: np.ndarray, own: np.ndarray, gap) -> np.ndarray | None:
        """Forward call n of this kind: the decisions to use (None: the run's own). ``gap(decisions)``: how far
        each decision is from the kink (from the nearest kink for a ReLU or ReLU6, the window's max less the picked
        value for a max-pool)."""
        b, side = self.branches, self.side
        n = self.calls[kind]
        self.calls[kind] += 1
        if b.unreadable.get(kind) or (side != TORCH and not b.aligned(kind)):
            return None                  # all or nothing: a kind that cannot be replayed whole is not replayed
        recorded = b.torch[kind] if side == TORCH else b.mindspore[kind]
        key = f"{side} {kind}"
        if n >= len(recorded) or (recorded[n][1] if side == TORCH else recorded[n]).shape != own.shape:
            if not b.unreplayed.get(key):
                b.unreplayed[key] = (f"the float64 copy's {kind} call {n + 1} is not {side}'s (another count or "
                                     f"shape): {side}'s {kind} decisions not replayed from there on")
            return None
        if side == TORCH:
            b.bands[kind].append(band(recorded[n][0], x64))
        theirs = recorded[n][1] if side == TORCH else recorded[n]
        limit, scale = b.bands[kind][n], float(np.abs(x64).max(initial=0.0)) or 1.0
        gaps = gap(theirs)
        differ, near = own != theirs, gaps <= limit
        forgiven = differ & near
        b.differ[side] += int(differ.sum())
        b.forgiven[side][kind] += int(forgiven.sum())
        if forgiven.any():
            b.largest[side] = max(b.largest[side], float(gaps[forgiven].max()) / scale)
        chosen = np.where(forgiven, theirs, own)
        if side == TORCH and b.aligned(kind) and n < len(b.mindspore[kind]):
            mine = b.mindspore[kind][n]
            gaps = gap(mine)
            parted, near = mine != chosen, gaps <= limit
            b.differ[MINDSPORE] += int(parted.sum())
            b.edge += int((parted & near).sum())
            self._far(kind, n, parted & ~near, gaps, limit)
        elif side != TORCH:
            self._far(kind, n, differ & ~near, gaps, limit)
        return chosen if forgiven.any() else None

    def unreadable(self, kind: str) -> None:
        """A call whose float64 input cannot be read: it keeps its own decisions."""
        self.calls[kind] += 1
        key = f"{self.side} {kind}"
        if not self.branches.unreplayed.get(key):
            self.branches.unreplayed[key] = (f"the float64 copy's {kind} call {self.calls[kind]} could not be "
                                             f"read: it kept its own decisions")

    def _far(self, kind, n, far, gaps, limit) -> None:
        if far.any():
            count = int(far.sum())
            self.branches.beyond.append(
                f"{kind} call {n + 1} (shape {far.shape}): {count} decision{'s' * (count != 1)} up to "
                f"{float(gaps[far].max()):.3g} from {_FROM[kind]}, where round-off reaches "
                f"{float(np.broadcast_to(limit, far.shape)[far].max()):.3g}")


@contextlib.contextmanager
def replaying_torch(branches: Branches, side: str = TORCH):
    """A float64 torch run that takes ``side``'s decision where its own differs within the band. Along torch's
    branches it measures each call's band and where MindSpore's decisions differ from its own (within the band:
    ``edge``; beyond: ``beyond``); along MindSpore's it uses the bands. A recomputation in backward takes its
    forward call's decisions (matched by input). Yields the run's phase."""
    import torch

    phase = Phase()
    choices = _Choices(branches, side)
    # (kind, forward input) -> the decisions replayed there: a recomputation of that input takes them again. Only
    # replayed calls are kept (elsewhere the run's own decisions are the forward's), so most inputs are never hashed
    decided: dict[tuple[str, str], np.ndarray] = {}

    def chosen(kind, x64, own, gap):
        if phase.forward:
            choice = choices.choose(kind, x64, own, gap)
            if choice is not None:
                decided[kind, _digest(x64)] = choice
            return choice
        return decided.get((kind, _digest(x64))) if decided else None

    def clamp(kind, x, original, inplace, args, kwargs):
        try:
            x64 = _numpy(x)
        except _Unreadable:
            choices.unreadable(kind)
            return original(x, *args, **kwargs)
        seg = chosen(kind, x64, segments(x64, kind), lambda _: _kink_gap(x64, kind))
        if seg is None:
            return original(x, *args, **kwargs)
        seg = torch.from_numpy(seg).to(x.device)
        low, high = CLAMPS[kind]
        if kind == LEAKY_RELU:
            slope = dict(zip(("negative_slope", "inplace"), args), **kwargs).get("negative_slope", LEAKY_SLOPE)
            out = torch.where(seg == 1, x, torch.where(seg == TIE, x * ((1 + slope) / 2), x * slope))
            return x.copy_(out) if inplace else out
        if inplace:
            x = x.masked_fill_(seg == 0, low)
            return x if high is None else x.masked_fill_(seg == 2, high)
        kinked = torch.full_like(x, low) if high is None else torch.where(seg == 0, low, torch.full_like(x, high))
        return torch.where(seg == 1, x, kinked)

    def max_pool(x, args, kwargs, return_indices):
        out, picks = _pool_with_indices(x, args, kwargs)
        if x.dim() != 4:
            return (out, picks) if return_indices else out
        try:
            x64, top = _numpy(x), _numpy(out)
        except _Unreadable:
            choices.unreadable(MAX_POOL)
            return (out, picks) if return_indices else out
        replayed = chosen(MAX_POOL, x64, _numpy(picks), lambda p: top - _pick(x64, p))
        if replayed is not None:
            picks = torch.from_numpy(replayed).to(x.device)
            out = x.flatten(2).gather(2, picks.flatten(2)).view_as(out)
        return (out, picks) if return_indices else out

    with _patching(_torch_kinks(clamp, max_pool)):
        yield phase
    for kind in KINDS:
        recorded = branches.torch[kind] if side == TORCH else branches.mindspore[kind]
        key = f"{side} {kind}"
        if not branches.unreplayed.get(key) and not branches.unreadable.get(kind) \
                and choices.calls[kind] != len(recorded):
            branches.unreplayed[key] = (f"the float64 copy ran {kind} {choices.calls[kind]} times, {side} "
                                        f"{len(recorded)}: {side}'s {kind} decisions not replayed")
