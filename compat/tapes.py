"""What a pair's runs record and replay, entered together: torch's dropout masks (compat.dropout_replay), its random
draws (compat.draw_replay) and each side's decisions at kinks, ReLU and max-pool (compat.kink_replay). torch's float32 run records first, then
MindSpore's, then the float64 reference runs replay; each context yields a phase for runs.py's forward_context (None
without a tape)."""
from __future__ import annotations

import contextlib
from dataclasses import dataclass

from . import draw_replay, dropout_replay, kink_replay
from .draw_replay import DrawTape
from .dropout_replay import MaskTape
from .kink_replay import TORCH, Branches


class _Phases:
    """Several runs' phases entered as one."""

    def __init__(self, phases):
        self.phases = phases

    @contextlib.contextmanager
    def during_forward(self):
        with contextlib.ExitStack() as stack:
            for phase in self.phases:
                stack.enter_context(phase.during_forward())
            yield


@contextlib.contextmanager
def _entered(*tapes_and_contexts):
    with contextlib.ExitStack() as stack:
        phases = [stack.enter_context(how(tape, *args)) for tape, how, *args in tapes_and_contexts
                  if tape is not None]
        yield _Phases(phases) if phases else None


@dataclass
class Tapes:
    masks: MaskTape | None = None     # torch's dropout masks; None: each side draws its own
    branches: Branches | None = None  # the decisions at kinks; None: not recorded (GRAPH mode)
    draws: DrawTape | None = None     # torch's random draws (torch.rand, ...); None: each side draws its own

    @classmethod
    def for_pair(cls, ms_mode: str, dropout: str = "replay", kinks: bool = True) -> "Tapes":
        """PyNative records them all; GRAPH mode compiles dropout, draws, ReLU and max-pool into the graph, where
        nothing is seen. ``dropout="replay"`` replays torch's random draws with its masks."""
        pynative = ms_mode == "pynative"
        replay = pynative and dropout == "replay"
        return cls(MaskTape() if replay else None, Branches() if pynative and kinks else None,
                   DrawTape() if replay else None)

    def torch(self):
        """torch's float32 run: it draws the masks and the values and decides its kinks."""
        return _entered((self.masks, dropout_replay.recording), (self.draws, draw_replay.recording),
                        (self.branches, kink_replay.recording_torch))

    def mindspore(self):
        """MindSpore's run: it takes torch's masks and draws and decides its kinks."""
        return _entered((self.masks, dropout_replay.replaying_mindspore),
                        (self.draws, draw_replay.replaying_mindspore),
                        (self.branches, kink_replay.recording_mindspore))

    def reference(self, side: str = TORCH):
        """A float64 run of the torch model: torch's masks and draws, and ``side``'s decisions within round-off of a
        kink."""
        return _entered((self.masks, dropout_replay.replaying_torch), (self.draws, draw_replay.replaying_torch),
                        (self.branches, kink_replay.replaying_torch, side))

    def needs_mindspore_reference(self) -> bool:
        """Whether MindSpore went another way at a kink than the float64 run along torch's, within round-off:
        then MindSpore is judged against a float64 run along its own branches."""
        return self.branches is not None and self.branches.needs_mindspore_run()
