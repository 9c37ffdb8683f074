"""Random draws with the same values on both sides: how compare() judges a pair whose forward draws (a VAE's sample,
drop connect's mask from torch.rand).

torch and MindSpore draw from different generators, so a pair whose forward calls ``torch.randn_like`` differs
however right the port is. As for dropout masks (compat.dropout_replay), compare() lets torch draw and hands the
values to the other runs. The functions replayed are the mapping entries marked ``draws`` (mappings/tensors.yaml:
``torch.rand`` and ``mindspore.ops.rand``, ...), each side's names as the entry gives them:

* **torch (float32) records** what each call returned, in call order, in the forward and in a checkpointed
  region's recomputation in backward (torch restores its generator there, so the same values come again).
* **MindSpore and the float64 reference replay.** A MindSpore call still draws (its generator moves on as in a real
  run) and gets the value of torch's call in the same place of the forward, in its own dtype; it must have the same
  shape and draw from the same distribution (the entries' ``draws``: ``ops.randn`` may stand for
  ``torch.randn_like``), else DrawReplayError names the call. MindSpore's
  recomputation gets what its forward call got where it draws again what its forward drew (its generator restored),
  else its new draw, as in a real run: the gradients then differ, and the row says why. The float64 twin follows
  torch's recomputation in order.

A call through a name bound before the run (``from torch import rand``) is not seen; GRAPH mode compiles the draws
into the graph, where nothing is replayed.
"""
from __future__ import annotations

import contextlib
import functools
import hashlib
import importlib
from dataclasses import dataclass, field

import numpy as np

from .dropout_replay import Phase


class DrawReplayError(RuntimeError):
    """A side drew where torch did not: more calls, another shape, or another distribution."""


@dataclass
class DrawTape:
    """The values torch's random draws returned, in call order (the forward's, its recomputation's), and what each
    replaying run did with them."""

    values: list[np.ndarray] = field(default_factory=list)
    apis: list[str] = field(default_factory=list)              # per forward draw: the torch function called
    recomputed: list[np.ndarray] = field(default_factory=list)
    taken: dict[str, int] = field(default_factory=dict)        # side -> forward draws served
    redrawn: dict[str, int] = field(default_factory=dict)      # side -> recomputations with a new draw


def drawing_functions() -> dict[str, dict[str, str]]:
    """Side -> {the dotted name of each function the mappings mark as drawing: its distribution}
    (Mappings.drawing)."""
    from recompat import mappings

    return mappings.default().drawing


@contextlib.contextmanager
def _patched(names, wrap):
    """Each module-level function of `names` (dotted) replaced by wrap(its name, the function) for the context;
    one its framework does not have is left out. Left as they are: a call made inside a replaced one (randn_like
    through randn), and one from a generator or seed of its own (compat.roundoff's probe draws its noise so), not
    the global one that the mappings carry over."""
    inside = []
    replaced = []

    def guarded(name, original):
        replacement = wrap(name, original)

        @functools.wraps(original)
        def call(*args, **kwargs):
            if inside or kwargs.get("generator") is not None or kwargs.get("seed") is not None:
                return original(*args, **kwargs)
            inside.append(name)
            try:
                return replacement(*args, **kwargs)
            finally:
                inside.pop()
        return call

    for name in dict.fromkeys(names):
        module_name, attr = name.rsplit(".", 1)
        try:
            module = importlib.import_module(module_name)
        except ImportError:
            continue
        original = getattr(module, attr, None)
        if original is not None:
            replaced.append((module, attr, original))
            setattr(module, attr, guarded(name, original))
    try:
        yield
    finally:
        for module, attr, original in replaced:
            setattr(module, attr, original)


def _digest(array: np.ndarray) -> str:
    data = np.ascontiguousarray(array).tobytes() + str(array.shape).encode() + str(array.dtype).encode()
    return hashlib.blake2b(data, digest_size=16).hexdigest()


@contextlib.contextmanager
def recording(tape: DrawTape):
    """torch's float32 run: its draws kept, the forward's and the recomputation's. Yields the run's phase."""
    phase = Phase()

    def wrap(name, original):
        def call(*args, **kwargs):
            out = original(*args, **kwargs)
            value = out.detach().cpu().numpy().copy()
            if phase.forward:
                tape.values.append(value)
                tape.apis.append(name)
            else:
                tape.recomputed.append(value)
            return out
        return call

    with _patched(drawing_functions()["torch"], wrap):
        yield phase


class _Replayer:
    """Serves torch's forward draws in call order to one side's forward; a recomputation gets what its forward
    call got where the side draws the same again, else its own new draw; a side without its own draws to compare
    (the float64 twin) follows torch's recomputation in order."""

    def __init__(self, tape: DrawTape, side: str, framework: str):
        self.tape, self.side, self.phase = tape, side, Phase()
        self.distributions = {**drawing_functions()["torch"], **drawing_functions()[framework]}
        self.seen: dict[str, np.ndarray] = {}   # digest of the side's own forward draw -> the value it was given
        self.recomputations = 0
        tape.taken[side] = tape.redrawn[side] = 0

    def value(self, name: str, own: np.ndarray, follows_torch: bool) -> np.ndarray:
        if not self.phase.forward:
            if follows_torch:
                n, self.recomputations = self.recomputations, self.recomputations + 1
                if n >= len(self.tape.recomputed):
                    raise DrawReplayError(f"{self.side} recomputes {name} more often than torch did")
                return self.tape.recomputed[n]
            given = self.seen.get(_digest(own))
            if given is None:     # the side really draws anew in its recomputation: so does the replay
                self.tape.redrawn[self.side] += 1
                return own
            return given
        n = self.tape.taken[self.side]
        drawn = len(self.tape.values)
        if n >= drawn:
            raise DrawReplayError(f"{self.side}'s forward draws more often than torch's, which drew {drawn} "
                                  f"time{'s' if drawn != 1 else ''}: {name} (call {n + 1}) has no torch draw to "
                                  "stand for")
        value, torch_name = self.tape.values[n], self.tape.apis[n]
        mine, torchs = self.distributions[name], self.distributions[torch_name]
        if mine != torchs:
            raise DrawReplayError(f"{self.side}'s draw {n + 1} calls {name} ({mine}); torch's draw {n + 1} called "
                                  f"{torch_name} ({torchs}): another distribution, or the draws are in another "
                                  "order")
        if value.shape != own.shape:
            raise DrawReplayError(f"{self.side}'s draw {n + 1} ({name}) has shape {own.shape}; torch's "
                                  f"({torch_name}) had {value.shape}: the draws are in another order or place")
        self.tape.taken[self.side] = n + 1
        if not follows_torch:
            self.seen[_digest(own)] = value
        return value


@contextlib.contextmanager
def replaying_torch(tape: DrawTape, side: str = "torch (float64 reference)"):
    """A torch run (the float64 twin) whose draws return torch's recorded values, in its own dtype. Yields the
    run's phase."""
    import torch

    replay = _Replayer(tape, side, "torch")

    def wrap(name, original):
        def call(*args, **kwargs):
            out = original(*args, **kwargs)
            value = replay.value(name, out.detach().cpu().numpy(), follows_torch=True)
            return torch.as_tensor(value, device=out.device).to(out.dtype).requires_grad_(out.requires_grad)
        return call

    with _patched(drawing_functions()["torch"], wrap):
        yield replay.phase


@contextlib.contextmanager
def replaying_mindspore(tape: DrawTape, side: str = "MindSpore"):
    """A MindSpore PyNative run whose draws (ops.rand, ...) return torch's recorded values. Yields the phase."""
    import mindspore

    replay = _Replayer(tape, side, "mindspore")

    def wrap(name, original):
        def call(*args, **kwargs):
            out = original(*args, **kwargs)    # drawn as in a real run: its generator moves on
            value = replay.value(name, out.asnumpy(), follows_torch=False)
            return mindspore.Tensor(np.asarray(value), dtype=out.dtype)
        return call

    with _patched(drawing_functions()["mindspore"], wrap):
        yield replay.phase
