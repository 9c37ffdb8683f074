"""``compare_training``: N training steps on both sides, judged after every step.

    report = compare_training(torch_model, ms_model, batches, loss=torch.nn.CrossEntropyLoss(label_smoothing=0.1),
                              optimizer=torch.optim.AdamW(torch_model.parameters(), lr=1e-3),
                              schedule=None, clip_grad_norm=1.0)
    assert report.passed, str(report)

compare() checks one forward and one backward; a port also breaks after that, in the optimizer, the loss, the
schedule, the clipping, or a running statistic that drifts. Each training piece is given as torch spells it: the
user's own torch objects. Its MindSpore counterpart is built from the piece's entry in ``mappings/training.yaml``
(``counterpart``): the settings are read from the torch object (an optimizer's param groups, a loss's or
schedule's attributes, the clip's keyword arguments) and passed on, renamed and converted, as the entry says; a
setting that cannot carry over (the entry drops it with RC309) is refused with the entry's reason. A port's own
MindSpore pieces can be given instead (``mindspore_optimizer=``, ``mindspore_clip_grad_norm=``, and so on): that is
how a port is tested, and the harness then gives that side nothing of torch's (a port that forgot its clipping
fails; an optimizer carrying its own rates is that port's schedule). The rate row judges a difference beside the
largest rate used so far: what it does to the step, not the ulps of a rate that vanishes.

Each step runs, on each side: forward, loss, backward, clipping, the optimizer's step, the schedule's step (torch's
order; MindSpore's experimental schedules use the step-k rate at step k as torch does). Both models are trained in
place, in training mode, from the same weights: as compare() chooses them (compat.user_weights: the MindSpore
model's own where it already holds torch's values, or a file's, judged before the first step; torch's copied in
for two freshly built models).
Integer batches (class labels) go to MindSpore as int32: its CrossEntropyLoss and NLLLoss refuse int64.
Over the whole run, each side's live tensors are counted (compat.live): a MindSpore run that keeps one more tensor
a step where torch keeps none fails its "live tensors per step" row, though every value agrees.

The verdict after each step is compare()'s round-off rule, step by step: a float64 copy of the torch model trains
beside it (its own optimizer and schedule, rebuilt from torch's), and each tensor (the step's loss, every parameter
and buffer after the step) passes while MindSpore is at most ROUNDOFF_FACTOR times as far from the float64 run as
torch's float32 is, plus a floor of FLOOR_ULPS ulps. So the allowance grows with the steps exactly as far as
float32 round-off really accumulates in this training (torch's own distance from float64 is measured, never
assumed); a schedule or update that differs moves MindSpore away from both and fails at the step where it does.
Where the torch pieces cannot be rebuilt or run in float64, or when ``rtol``/``atol`` are given, those judge every
step instead (a fixed tolerance; the report says why). Active dropout is replayed per step (compat.dropout_replay).
Where MindSpore takes the other branch at a kink than float64 within round-off (a ReLU input near 0, a max-pool
near-tie: compat.kink_replay), a second float64 copy goes on from that step along MindSpore's branches, and
MindSpore is judged against it from then on.
"""
from __future__ import annotations

import ast
import contextlib
import copy
import os
from dataclasses import dataclass, field
from typing import Any, Sequence

import numpy as np

from recompat import mappings as mapping_data
from recompat.constants import TRAINING_PARTED, either

from .compare import (_EPS, DROPOUT, FLOOR_ULPS, REFERENCE_UNLIKE, ROUNDOFF_FACTOR, CompareReport, CompareRow,
                      Tolerance, compare_results, expected_is_far, float64_twin, kink_row, transfer_rows,
                      wants_reference, weight_rows)
from .kink_replay import MINDSPORE, TORCH
from .live import WARM_UP, live_tensor_row, live_tensors, resident_bytes, sampled
from .runs import RunResult
from .tapes import Tapes
from .user_weights import check_weights, choose_weights, unused_rows

REFERENCE = "torch (float64 reference)"
FORK = "torch (float64 along MindSpore's branches at kinks)"


class TrainingError(ValueError):
    """A training setup compare_training cannot run as asked: a piece with no counterpart, a setting that does not
    carry over, a torch optimizer or schedule that has already stepped. The message says what to do."""


# ------------------------------------------------------------------------------------- counterparts from mappings

_MISSING = object()
# the compare_training argument that takes the port's own piece, per rule
_ARGUMENT = {"optimizer": "optimizer", "loss": "loss", "lr_schedule": "schedule", "grad_clip": "clip_grad_norm"}


def _entry(rule: str, obj, maps) -> mapping_data.Entry:
    """The training.yaml entry of `rule` whose torch class ``obj`` is (exactly: a subclass may compute otherwise)."""
    for e in maps.training:
        if e.rule == rule and type(obj) is _resolve(e.torch["api"], quiet=True):
            return e
    known = ", ".join(e.torch["api"] for e in maps.training if e.rule == rule)
    raise TrainingError(f"{type(obj).__module__}.{type(obj).__qualname__}: no {rule} pair in mappings/training.yaml "
                        f"(known: {known}) — pass the MindSpore counterpart yourself "
                        f"(mindspore_{_ARGUMENT[rule]}=...)")


def _resolve(dotted: str, quiet: bool = False):
    """The installed API an entry names (the one resolver the drift test uses); TrainingError, or None if quiet,
    when this version lacks it."""
    from recompat.reports.signatures import resolve

    try:
        return resolve(dotted)
    except (ImportError, AttributeError):
        if quiet:
            return None
        raise TrainingError(f"{dotted}: not found in the installed framework — the mapping entry names an API this "
                            "version lacks (tests/test_drift.py checks them)") from None


def _literal(text: str | None):
    return None if text is None else ast.literal_eval(text)


def _plain(value):
    """A setting as a plain value: a one-element tensor (torch takes lr and betas so) as a float, another tensor
    (a loss's class weights) as an array."""
    import torch

    if isinstance(value, torch.Tensor):
        return float(value) if value.numel() == 1 and value.dim() == 0 else value.detach().cpu().numpy()
    if isinstance(value, tuple):
        return tuple(_plain(v) for v in value)
    return value


def _same_setting(a, b) -> bool:
    if isinstance(a, np.ndarray) or isinstance(b, np.ndarray):
        return a is not None and b is not None and np.array_equal(np.asarray(a), np.asarray(b))
    return a == b


def settings(entry: mapping_data.Entry, read) -> dict[str, Any]:
    """The MindSpore keyword arguments for a torch piece's settings, as ``entry`` maps them. ``read(name)`` gives
    the torch setting (or _MISSING: then the torch default). Params with a role are compare_training's to supply.
    A dropped setting with a code refuses any value but its default (TrainingError with the entry's reason)."""
    from recompat.translator.convert import apply

    out: dict[str, Any] = {}
    for p in entry.params:
        if p.role:
            continue
        if p.torch is None:                      # MindSpore's own: the value that does what torch does
            if p.mindspore and p.torch_default is not None:
                out[p.mindspore] = _literal(p.torch_default)
            continue
        value = read(p.torch)
        default = _literal(p.torch_default)
        if value is _MISSING:
            value = default
        value = _plain(value)
        if p.action == "drop":
            if p.code and not _same_setting(value, default):
                raise TrainingError(f"{entry.torch['api']}: {p.torch}={value!r} has no counterpart in "
                                    f"{entry.mindspore['api']} ({p.why}) — only {default!r} carries over; pass "
                                    f"the MindSpore piece yourself (mindspore_{_ARGUMENT[entry.rule]}=...)")
            continue
        if p.convert:
            value = apply(p.convert, "mindspore", {p.torch: value}, {p.torch: p.mindspore})[p.mindspore]
        out[p.mindspore] = value
    return out


def _ms_value(value):
    import mindspore

    if isinstance(value, np.ndarray):
        return mindspore.Tensor(value.astype(np.float32) if value.dtype == np.float64 else value)
    return value


def counterpart_loss(loss, maps=None):
    """The MindSpore counterpart of a torch loss module, built from its training.yaml entry."""
    maps = maps or mapping_data.default()
    entry = _entry("loss", loss, maps)
    kwargs = settings(entry, lambda name: getattr(loss, name, _MISSING))
    return _resolve(entry.mindspore["api"])(**{k: _ms_value(v) for k, v in kwargs.items()})


def _start_lr(group: dict, scheduled: bool) -> float:
    """A param group's rate at the start: a torch schedule sets ``lr`` when it is made (LinearLR scales it) and
    keeps the rate it found in ``initial_lr``; its counterpart, made anew, sets it again."""
    return group["initial_lr"] if scheduled and "initial_lr" in group else group["lr"]


def counterpart_optimizer(optimizer, params_for, maps=None, *, scheduled: bool = False):
    """The MindSpore counterpart of a torch optimizer: one group per torch param group, its parameters given by
    ``params_for(torch parameters)``, its settings read from the group as the entry maps them. ``scheduled``: a
    schedule is rebuilt on it too (the rates start from ``initial_lr``)."""
    maps = maps or mapping_data.default()
    entry = _entry("optimizer", optimizer, maps)
    groups = []
    for group in optimizer.param_groups:
        read = lambda name, g=group: _start_lr(g, scheduled) if name == "lr" else g.get(name, _MISSING)  # noqa: E731
        groups.append({"params": params_for(group["params"]), **settings(entry, read)})
    first = {k: v for k, v in groups[0].items() if k != "params"}
    return _resolve(entry.mindspore["api"])(groups, **first)


def _schedule_settings(entry, schedule) -> dict[str, Any]:
    return {p.torch: getattr(schedule, p.torch) for p in entry.params if not p.role and p.torch}


def counterpart_schedule(schedule, ms_optimizer, maps=None):
    """The MindSpore counterpart of a fresh torch LR schedule, on ``ms_optimizer``."""
    maps = maps or mapping_data.default()
    entry = _entry("lr_schedule", schedule, maps)
    return _resolve(entry.mindspore["api"])(ms_optimizer, **settings(entry, lambda n: getattr(schedule, n, _MISSING)))


@dataclass
class _Clip:
    """Gradient clipping on both sides: torch's clip_grad_norm_ keyword arguments (None: torch clips nothing) and
    MindSpore's, a function of the gradients (None: the port clips nothing), with the words the report gives it."""
    torch_kwargs: dict | None
    ms_clip: Any
    text: str

    @classmethod
    def make(cls, clip, maps, port=_MISSING) -> "_Clip | None":
        """torch's clip_grad_norm= and the port's mindspore_clip_grad_norm=: by default the counterpart of torch's
        (mappings/training.yaml); None: the port clips nothing; a number or a dict: the counterpart's keyword
        arguments in MindSpore's names; a callable: the port's own, gradients -> gradients."""
        if clip is None and port is _MISSING:
            return None
        entry = maps.training_pair("grad_clip", "torch.nn.utils.clip_grad_norm_")
        if entry is None:
            raise TrainingError("clip_grad_norm: mappings/training.yaml has no grad_clip pair for "
                                "torch.nn.utils.clip_grad_norm_ — restore it (clip_grad_norm)")
        torch_kwargs = cls._torch_kwargs(clip, entry) if clip is not None else None
        torch_text = f"torch.nn.utils.clip_grad_norm_({_kw(torch_kwargs)})" if torch_kwargs else "none"
        if port is None:
            return cls(torch_kwargs, None, f"{torch_text} -> none (given: mindspore_clip_grad_norm=None)")
        if callable(port):
            return cls(torch_kwargs, port, f"{torch_text} -> {getattr(port, '__qualname__', repr(port))} (given)")
        if port is _MISSING:
            ms_kwargs, source = settings(entry, lambda n: torch_kwargs.get(n, _MISSING)), "mappings/training.yaml"
        elif isinstance(port, (int, float, dict)) and not isinstance(port, bool):
            ms_kwargs, source = (dict(port) if isinstance(port, dict) else {"max_norm": port}), "given"
        else:
            raise TrainingError(f"mindspore_clip_grad_norm={port!r}: give the port's clipping as a function of the "
                                f"gradients (lambda grads: ops.clip_by_global_norm(grads, 1.0)), as "
                                f"{entry.mindspore['api']}'s max_norm or keyword arguments, or None where the port "
                                f"clips nothing")
        function = _resolve(entry.mindspore["api"])
        return cls(torch_kwargs, lambda grads: function(grads, **ms_kwargs),
                   f"{torch_text} -> {_dotted(function)}({_kw(ms_kwargs)}) ({source})")

    @staticmethod
    def _torch_kwargs(clip, entry) -> dict:
        kwargs = dict(clip) if isinstance(clip, dict) else {"max_norm": clip}
        names = {p.torch for p in entry.params if p.torch and not p.role}
        unknown = sorted(set(kwargs) - names)
        max_norm = kwargs.get("max_norm")
        if unknown or isinstance(max_norm, bool) or not isinstance(max_norm, (int, float)) or not max_norm > 0:
            raise TrainingError(f"clip_grad_norm={clip!r}: give max_norm as a number above 0, or torch's keyword "
                                f"arguments "
                                f"of clip_grad_norm_ with one ({', '.join(sorted(names))})"
                                + (f"; unknown: {', '.join(unknown)}" if unknown else ""))
        return kwargs


# ----------------------------------------------------------------------------------------------- the report

@dataclass
class TrainingStep:
    """One step: each side's loss and learning rate at it, and the rows judging the loss and every parameter and
    buffer after it."""
    step: int                                   # 1-based
    loss: dict[str, float]                      # framework -> the step's loss (before the update)
    lr: dict[str, float]                        # framework -> the rate the step used (first param group)
    rows: list[CompareRow]
    divergence: float                           # largest norm-wise relative distance MindSpore vs torch, params
    flipped: dict[str, int] = field(default_factory=dict)   # framework -> kinks it took the other way (ReLU, pool)

    @property
    def passed(self) -> bool:
        return all(r.passed for r in self.rows)

    def to_dict(self) -> dict:
        return {"step": self.step, "loss": self.loss, "lr": self.lr, "divergence": self.divergence,
                "flipped": self.flipped, "passed": self.passed,
                "rows": [r.to_dict() for r in self.rows if not r.passed]}


@dataclass
class TrainingReport:
    steps: list[TrainingStep]
    setup: list[CompareRow]                     # rows judged before the first step (settings of paired layers)
    pieces: dict[str, str]                      # what trained on each side: "optimizer" -> "torch.optim.X -> ..."
    meta: dict = field(default_factory=dict)
    run: list[CompareRow] = field(default_factory=list)     # rows judged over the whole run (live tensors)

    @property
    def passed(self) -> bool:
        return (bool(self.steps) and all(r.passed for r in (*self.setup, *self.run))
                and all(s.passed for s in self.steps))

    def __bool__(self) -> bool:
        return self.passed

    @property
    def first_failure(self) -> TrainingStep | None:
        """The first step at which a tensor left the tolerance."""
        return next((s for s in self.steps if not s.passed), None)

    @property
    def parted_at(self) -> int | None:
        """The first step at which a side's float32 took a kink the other way within round-off (compat.kink_replay):
        from there each side trains along its own branches, judged against a float64 run that does too, and the
        divergence between the sides is that chance, not the port."""
        return next((s.step for s in self.steps if any(s.flipped.values())), None)

    @property
    def torch_far_from(self) -> int | None:
        """The first step at which torch's own float32 is the side far from the float64 run (a row says so): from
        there the divergence measures torch's round-off, amplified by training, more than the port."""
        return next((s.step for s in self.steps for r in s.rows if expected_is_far(r, TORCH)), None)

    def loss_curves(self) -> dict[str, list[float]]:
        return {side: [s.loss[side] for s in self.steps] for side in self.steps[0].loss} if self.steps else {}

    def to_dict(self) -> dict:
        first = self.first_failure
        return {"passed": self.passed, "steps_run": len(self.steps),
                "first_failure": first.step if first else None, "torch_far_from": self.torch_far_from,
                "parted_at": self.parted_at,
                "pieces": self.pieces,
                "setup": [r.to_dict() for r in self.setup], "run": [r.to_dict() for r in self.run],
                "loss": self.loss_curves(),
                "divergence": [s.divergence for s in self.steps], "steps": [s.to_dict() for s in self.steps],
                "meta": self.meta}

    def __str__(self) -> str:
        n = len(self.steps)
        verdict = self.meta.get("verdict", "")
        lines = [f"compare_training: {n} step{'s' if n != 1 else ''}, "
                 + ("PASSED" if self.passed else "FAILED") + (f" ({verdict})" if verdict else "")]
        lines += [f"  {role}: {text}" for role, text in self.pieces.items()]
        if isinstance(self.meta.get("weights"), dict):
            lines.append(f"  weights judged: {self.meta['weights']['judged']}")
        lines += [f"  setup: {r.name}: {r.message}" for r in self.setup if not r.passed]
        lines += [f"  {r.name}: {'' if r.passed else 'FAILED: '}{r.message}" for r in self.run]
        shown = sorted({1, n, *(s.step for s in self.steps if s.step in (10, 100)), *([self.first_failure.step]
                        if self.first_failure else [])} - {0})
        lines.append(f"  {'step':>6} {'loss torch':>14} {'loss MindSpore':>14} {'divergence':>11}")
        for s in self.steps:
            if s.step in shown:
                mark = "" if s.passed else f"  <- {len([r for r in s.rows if not r.passed])} tensors out"
                lines.append(f"  {s.step:>6} {s.loss[TORCH]:>14.7g} {s.loss[MINDSPORE]:>14.7g} "
                             f"{s.divergence:>11.3g}{mark}")
        parted = self.parted_at
        if parted is not None:
            lines.append(f"  {TRAINING_PARTED.format(step=parted)}")
        far = self.torch_far_from
        if far is not None:
            lines.append(f"  from step {far}, torch's own float32 is the side far from the float64 run: there the "
                         "divergence is torch's round-off, amplified by training")
        first = self.first_failure
        if first is not None:
            lines.append(f"  first left the tolerance at step {first.step}:")
            lines += [f"    {r.name} ({r.kind}): {r.message}" for r in first.rows if not r.passed][:8]
        return "\n".join(lines)


# ------------------------------------------------------------------------------------------------ the runs

def _split(batch):
    """(model inputs, target) of one batch: (inputs, target), inputs an array or a tuple/list of them."""
    if not (isinstance(batch, (tuple, list)) and len(batch) == 2):
        raise TrainingError(f"a batch must be (inputs, target), not {type(batch).__name__} of "
                            f"{len(batch) if hasattr(batch, '__len__') else '?'} items")
    inputs, target = batch
    inputs = tuple(inputs) if isinstance(inputs, (tuple, list)) else (inputs,)
    return tuple(np.asarray(x) for x in inputs), np.asarray(target)


def _torch_value(a: np.ndarray, dtype):
    import torch

    if np.issubdtype(a.dtype, np.integer):
        return torch.from_numpy(a.astype(np.int64))
    return torch.from_numpy(np.ascontiguousarray(a)).to(dtype)


def _ms_input(a: np.ndarray):
    import mindspore

    if np.issubdtype(a.dtype, np.integer):
        return mindspore.Tensor(a.astype(np.int32))    # MindSpore's losses refuse int64 class labels
    return mindspore.Tensor(a.astype(np.float32))


class _TorchSide:
    """A torch model with its optimizer, schedule and loss, in float32 (the user's) or float64 (the reference)."""

    def __init__(self, model, optimizer, schedule, loss, clip, dtype):
        self.model, self.optimizer, self.schedule, self.loss, self.clip, self.dtype = \
            model, optimizer, schedule, loss, clip, dtype

    def step(self, inputs, target, phase) -> tuple[float, float]:
        import torch

        lr = float(self.optimizer.param_groups[0]["lr"])
        self.optimizer.zero_grad(set_to_none=True)
        with phase.during_forward() if phase is not None else contextlib.nullcontext():
            out = self.model(*(_torch_value(x, self.dtype) for x in inputs))
            loss = self.loss(out, _torch_value(target, self.dtype))
        if loss.dim() != 0:
            raise TrainingError(f"the loss gives shape {tuple(loss.shape)}, not one number: reduce it (reduction "
                                "'mean' or 'sum') — a training step backpropagates one loss")
        loss.backward()
        if self.clip is not None and self.clip.torch_kwargs:   # the optimizer's, as MindSpore clips those it is given
            torch.nn.utils.clip_grad_norm_([p for g in self.optimizer.param_groups for p in g["params"]],
                                           **self.clip.torch_kwargs)
        self.optimizer.step()
        if self.schedule is not None:
            self.schedule.step()
        return float(loss.detach()), lr


class _MindSporeSide:
    def __init__(self, model, optimizer, schedule, loss, clip):
        import mindspore

        self.model, self.optimizer, self.schedule, self.loss, self.clip = model, optimizer, schedule, loss, clip
        self._phase = None

        def forward(*args):
            with self._phase.during_forward() if self._phase is not None else contextlib.nullcontext():
                return self.loss(self.model(*args[:-1]), args[-1])
        self.grad = mindspore.value_and_grad(forward, None, optimizer.parameters)

    def lr(self) -> float | None:
        """The rate of the coming step (first group); None where it is not one number (rates per group)."""
        groups = getattr(self.optimizer, "param_groups", None)
        value = groups[0]["lr"] if groups else self.optimizer.get_lr()    # an nn.Optimizer's, its own list too
        try:
            return float(value.asnumpy() if hasattr(value, "asnumpy") else value)
        except (TypeError, ValueError):
            return None

    def step(self, inputs, target, phase) -> tuple[float, float]:
        lr = self.lr()
        self._phase = phase
        loss, grads = self.grad(*(_ms_input(x) for x in inputs), _ms_input(target))
        if self.clip is not None and self.clip.ms_clip is not None:
            grads = self.clip.ms_clip(grads)
        self.optimizer(grads)
        if self.schedule is not None:
            self.schedule.step()
        return float(loss.asnumpy()), lr


def _own_rates(ms_opt, steps: int, ms_schedule) -> str:
    """What a MindSpore nn optimizer's own schedule is (a list of rates, one per step, or a LearningRateSchedule),
    or "" for one fixed rate (or an experimental optimizer, scheduled from outside). A list shorter than the run,
    or a schedule given besides, is a TrainingError."""
    if not getattr(ms_opt, "dynamic_lr", False) or getattr(ms_opt, "is_group_lr", False):
        return ""
    rates = getattr(ms_opt.learning_rate, "learning_rate", None)     # a list: kept as a Parameter of one per step
    if rates is not None and len(rates.shape) == 1:
        if rates.shape[0] < steps:
            raise TrainingError(f"mindspore_optimizer carries a list of {rates.shape[0]} learning rates, one per "
                                f"step, and the run takes {steps} steps: give at least {steps} rates, or steps="
                                f"{rates.shape[0]}")
        own = f"a list of {rates.shape[0]} rates, one per step"
    else:
        own = _dotted(type(ms_opt.learning_rate))
    if ms_schedule is not None:
        raise TrainingError(f"mindspore_optimizer carries its own rates ({own}) and mindspore_schedule= sets them "
                            "too: give the port's schedule one way")
    return own


def _schedule_on(schedule, ms_opt, maps):
    """The counterpart of torch's schedule on the port's optimizer; a TrainingError that says how to give the
    port's rates where that optimizer cannot take one (a mindspore.nn optimizer takes its rates when built)."""
    try:
        return counterpart_schedule(schedule, ms_opt, maps)
    except (TypeError, ValueError, AttributeError) as err:
        raise TrainingError(
            f"{type(schedule).__name__}: its MindSpore counterpart cannot set the rate of {_dotted(type(ms_opt))} "
            f"({type(err).__name__}: {err}): a mindspore.nn optimizer takes its rates when built: give them as "
            f"learning_rate=[one rate per step] or a mindspore.nn LearningRateSchedule, or pass the port's schedule "
            f"as mindspore_schedule= on a mindspore.experimental.optim optimizer") from None


def _fresh(optimizer, schedule) -> None:
    if optimizer.state and any(optimizer.state.values()):
        raise TrainingError(f"{type(optimizer).__name__}: it has already stepped — compare_training starts both "
                            "sides from the same fresh state: pass an optimizer that has not stepped")
    if schedule is not None and getattr(schedule, "last_epoch", 0) != 0:
        raise TrainingError(f"{type(schedule).__name__}: it has already stepped (last_epoch="
                            f"{schedule.last_epoch}) — pass a fresh schedule")
    if schedule is not None and getattr(schedule, "optimizer", optimizer) is not optimizer:
        raise TrainingError(f"{type(schedule).__name__}: it is attached to another optimizer than optimizer=")


def _twin(torch_model, optimizer, schedule, loss, clip, maps) -> tuple[_TorchSide | None, str]:
    """The float64 reference: a copy of the model and of each piece, rebuilt on the copy's parameters; (None, why
    not) when one cannot be."""
    import torch

    twin, why = float64_twin(torch_model)
    if twin is None:
        return None, why
    try:
        names = {id(p): n for n, p in torch_model.named_parameters()}
        twin_params = dict(twin.named_parameters())
        groups = [{**{k: v for k, v in g.items() if k != "params"},
                   "params": [twin_params[names[id(p)]] for p in g["params"]]} for g in optimizer.param_groups]
        for g in groups:
            g["lr"] = _start_lr(g, schedule is not None)
        opt64 = type(optimizer)(groups)
        sched64 = None
        if schedule is not None:
            entry = _entry("lr_schedule", schedule, maps)
            sched64 = type(schedule)(opt64, **_schedule_settings(entry, schedule))
        loss64 = copy.deepcopy(loss).double() if isinstance(loss, torch.nn.Module) else loss   # a function: as is
        return _TorchSide(twin, opt64, sched64, loss64, clip, torch.float64), ""
    except (TrainingError, KeyError, TypeError, RuntimeError, ValueError, AttributeError) as err:
        return None, f"the torch pieces could not be rebuilt in float64 ({type(err).__name__}: {err})"


def _branch(twin: _TorchSide, maps) -> _TorchSide | None:
    """A copy of the float64 run as it stands (model, optimizer state, schedule), to go on along MindSpore's ReLU
    branches; None where one cannot be made."""
    fork, _ = _twin(twin.model, twin.optimizer, twin.schedule, twin.loss, twin.clip, maps)
    if fork is not None:      # deep copies: load_state_dict keeps tensors of the right dtype as they are (shared)
        fork.optimizer.load_state_dict(copy.deepcopy(twin.optimizer.state_dict()))
        if twin.schedule is not None:
            fork.schedule.load_state_dict(copy.deepcopy(twin.schedule.state_dict()))
    return fork


def _state(side, transfer, result: RunResult, kind_of: dict[str, str]) -> None:
    """Every paired parameter and buffer of one side after a step, by torch name, into ``result``."""
    for name, t, m in transfer.values():
        value = m if side == MINDSPORE else t
        result.add(name, kind_of.get(name, "param"), value)


def _twin_state(twin, transfer, result: RunResult, kind_of: dict[str, str]) -> None:
    # every name a tensor has: a module held under two names (tied weights) is paired under either
    tensors = {**dict(twin.named_parameters(remove_duplicate=False)),
               **dict(twin.named_buffers(remove_duplicate=False))}
    for pair in transfer.pairs:
        t = tensors.get(pair.torch_name)
        if t is not None:
            result.add(pair.torch_name, kind_of.get(pair.torch_name, "param"), t.detach().cpu().numpy())


# A schedule's rate is a float32 on MindSpore's side, updated step by step from the last one (cosine, linear), a
# Python float on torch's: at step k they may be k float32 roundings apart (measured: 12 ulps at step 28 of a
# cosine schedule), while a schedule that is off by a step is off by a factor (gamma) or by 1e-4 and more.
LR_ULPS_PER_STEP = 4.0


def lr_row(step: int, torch_lr: float, ms_lr: float, largest: float | None = None) -> CompareRow:
    """The rate a step used on both sides (first param group): within LR_ULPS_PER_STEP float32 ulps per step so
    far, of ``largest``, the largest rate torch has used so far (default: this one). A step moves the parameters
    by its rate times the update, so a difference does what its size beside the rates that moved them says: a
    rate that vanishes (a cosine schedule's end) is not judged by the ulps of a number near zero."""
    diff = abs(torch_lr - ms_lr)
    scale = max(abs(torch_lr), abs(largest or 0.0))
    allowed = LR_ULPS_PER_STEP * step * _EPS["float32"] * scale
    passed = diff <= allowed
    return CompareRow(name="lr", kind="schedule", expected_shape=(), actual_shape=(), expected_dtype="float32",
                      actual_dtype="float32", max_abs_err=diff, max_rel_err=diff / abs(torch_lr) if torch_lr else None,
                      cosine=None, within=float(passed), rtol=0.0, atol=allowed, passed=passed,
                      message="" if passed else (f"the step's learning rate: torch {torch_lr:.9g}, MindSpore "
                                                 f"{ms_lr:.9g}, more than {LR_ULPS_PER_STEP:g} float32 ulps per step "
                                                 f"of the largest rate so far ({scale:.9g}) apart"))


class _Live:
    """Each side's live tensors after the sampled steps (compat.live); none counted in a run too short to judge."""

    def __init__(self, steps: int):
        self.samples = sampled(steps) if steps >= WARM_UP + 2 else set()
        self.counts: dict[str, dict[int, int]] = {TORCH: {}, MINDSPORE: {}}
        self.rss: dict[int, int] = {}

    def after(self, side: str, step: int, tensor_type: type) -> None:
        if step in self.samples:
            self.counts[side][step] = live_tensors(tensor_type)
            self.rss[step] = resident_bytes()

    def row(self) -> CompareRow:
        return live_tensor_row(self.counts[TORCH], self.counts[MINDSPORE], {"the process (both sides)": self.rss})


def _divergence(expected: RunResult, actual: RunResult) -> float:
    worst = 0.0
    for name in expected.names("param"):
        e, a = expected.tensors[name].astype(np.float64), actual.tensors[name].astype(np.float64)
        scale = float(np.linalg.norm(e))
        if scale > 0:
            worst = max(worst, float(np.linalg.norm(a - e)) / scale)
    return worst


def compare_training(
    torch_model,
    ms_model,
    batches: Sequence,
    *,
    loss,
    optimizer,
    schedule=None,
    clip_grad_norm=None,
    mindspore_clip_grad_norm=_MISSING,
    mindspore_loss=None,
    mindspore_optimizer=None,
    mindspore_schedule=None,
    steps: int | None = None,
    weights: str | os.PathLike = "auto",
    reference: str | None = "auto",
    rtol: Tolerance = None,
    atol: Tolerance = None,
    strict: bool = True,
    dropout: str = "replay",
    kinks: bool = True,
    mappings=None,
) -> TrainingReport:
    """Train both models ``steps`` steps (default: one per batch; batches are reused in order when fewer) and judge
    after each one (the module docstring says how). ``loss``, ``optimizer`` (built on torch_model's parameters),
    ``schedule`` and ``clip_grad_norm`` (max_norm, or a dict of clip_grad_norm_'s keyword arguments) are torch's;
    each ``mindspore_*`` is the port's own counterpart, built from mappings/training.yaml when not given, and never
    supplied to both sides: ``mindspore_clip_grad_norm`` is the port's clipping (a function of the gradients, such
    as ``lambda g: ops.clip_by_global_norm(g, 1.0)``; the counterpart's max_norm or keyword arguments; None where
    the port clips nothing), and a MindSpore nn optimizer built with its own rates (``learning_rate=[...]`` or a
    LearningRateSchedule) is the port's schedule, judged against torch's ``schedule`` by each step's rate and by
    the parameters it moves.
    ``weights``: as compare()'s, less "mindspore" (torch's optimizer trains torch's weights): "auto" (the default)
    trains from the MindSpore model's own weights where it already holds torch's values, else from torch's copied
    in; a .ckpt or torch file is loaded into the MindSpore model first; "as-is" trains each from what it holds;
    "torch" copies. Weights not copied are judged before the first step (setup rows of kind "weight").
    ``strict``: a paired layer whose setting differs (BatchNorm momentum) fails before the first step. ``dropout``, ``kinks``: as compare()'s. TrainingError for a setup that cannot run; nothing is trained
    then."""
    import mindspore
    import torch

    from .weights import transfer_weights

    maps = mappings or mapping_data.default()
    reference = wants_reference(reference, rtol, atol)
    if weights == "mindspore":
        raise ValueError("weights='mindspore' is compare()'s only: torch's optimizer trains torch's weights; pass "
                         "'auto', 'torch', 'as-is' or the path of a weight file")
    check_weights(weights)
    if dropout not in DROPOUT:
        raise ValueError(f"dropout must be {either(map(repr, DROPOUT))}, not {dropout!r}")
    batches = list(batches)
    if not batches:
        raise TrainingError("batches is empty: give at least one (inputs, target) batch")
    steps = len(batches) if steps is None else steps
    if not isinstance(steps, int) or steps < 1:
        raise TrainingError(f"steps must be a positive int, not {steps!r}")
    split = [_split(b) for b in batches]
    _fresh(optimizer, schedule)
    clip = _Clip.make(clip_grad_norm, maps, mindspore_clip_grad_norm)

    choice = choose_weights(torch_model, ms_model, weights)     # a file is loaded into the MindSpore model
    torch_model.train()
    ms_model.set_train(True)
    copied = choice.run_with == "torch"
    transfer = transfer_weights(torch_model, ms_model, copy=copied)
    ms_params = {pair.torch_name: m for pair, (_, m) in zip(transfer.pairs, transfer.tensors)}
    names = {id(p): n for n, p in torch_model.named_parameters()}

    def params_for(torch_params):
        missing = [names.get(id(p), "?") for p in torch_params if names.get(id(p)) not in ms_params]
        if missing:
            raise TrainingError(f"optimizer: its parameters {', '.join(missing)} are not torch_model's, or have "
                                "no MindSpore counterpart: build the optimizer on torch_model.parameters()")
        return [ms_params[names[id(p)]] for p in torch_params]

    if mindspore_schedule is not None and schedule is None:
        raise TrainingError("mindspore_schedule= is given but schedule= is not: pass torch's schedule too (the "
                            "port's schedule is judged against it)")
    ms_opt = mindspore_optimizer or counterpart_optimizer(optimizer, params_for, maps, scheduled=schedule is not None)
    if mindspore_schedule is not None and getattr(mindspore_schedule, "optimizer", ms_opt) is not ms_opt:
        raise TrainingError("mindspore_schedule= sets the rate of another optimizer than the one that trains: "
                            "build it on mindspore_optimizer= (and pass both)")
    ms_loss = mindspore_loss or counterpart_loss(loss, maps)
    own_rates = _own_rates(ms_opt, steps, mindspore_schedule)
    ms_sched = None
    if schedule is not None and not own_rates:
        ms_sched = mindspore_schedule or _schedule_on(schedule, ms_opt, maps)
    pieces = {role: _piece(t, m, given) for role, t, m, given in (
        ("optimizer", optimizer, ms_opt, mindspore_optimizer is not None),
        ("loss", loss, ms_loss, mindspore_loss is not None),
        ("schedule", schedule, ms_sched, mindspore_schedule is not None)) if t is not None and m is not None}
    if own_rates:
        pieces["schedule"] = (f"{_dotted(type(schedule)) if schedule is not None else 'none'} -> the rates "
                              f"{_dotted(type(ms_opt))} carries: {own_rates} (given)")
    if clip is not None:
        pieces["clip"] = clip.text

    twin, no_reference = (None, "")
    if reference is not None:
        twin, no_reference = _twin(torch_model, optimizer, schedule, loss, clip, maps)
        if twin is None and reference == "float64":
            raise TrainingError(no_reference)
    sides = {TORCH: _TorchSide(torch_model, optimizer, schedule, loss, clip, torch.float32),
             MINDSPORE: _MindSporeSide(ms_model, ms_opt, ms_sched, ms_loss, clip)}
    kind_of = {n: "buffer" for n in transfer.buffers}
    setup = [*transfer_rows(transfer, strict), *([] if copied else weight_rows(transfer, choice.exact)),
             *unused_rows(choice)]

    out: list[TrainingStep] = []
    live = _Live(steps)
    dropped_at = None              # the step from which the float64 run no longer trains as torch does
    largest_lr = 0.0               # the largest rate torch has trained at so far
    fork = None                    # the float64 run along MindSpore's branches at kinks, from the step they parted
    for k in range(steps):
        inputs, target = split[k % len(split)]
        tapes = Tapes.for_pair("pynative", dropout, kinks)
        losses, lrs = {}, {}
        with tapes.torch() as phase:
            losses[TORCH], lrs[TORCH] = sides[TORCH].step(inputs, target, phase)
        live.after(TORCH, k + 1, torch.Tensor)
        with tapes.mindspore() as phase:
            losses[MINDSPORE], lrs[MINDSPORE] = sides[MINDSPORE].step(inputs, target, phase)
        live.after(MINDSPORE, k + 1, mindspore.Tensor)
        # a copy before the float64 run steps, where MindSpore's decisions at kinks went another way than torch's
        parted = tapes.branches is not None and tapes.branches.parted()
        candidate = fork if fork is not None else (_branch(twin, maps) if twin is not None and parted else None)
        if twin is not None:
            with tapes.reference(TORCH) as phase:
                losses[REFERENCE], lrs[REFERENCE] = twin.step(inputs, target, phase)
        if candidate is not None and (fork is not None or tapes.needs_mindspore_reference()):
            along_mindspore = RunResult(FORK)
            with tapes.reference(MINDSPORE) as phase:
                along_mindspore.add("loss", "output", np.float64(candidate.step(inputs, target, phase)[0]))
            _twin_state(candidate.model, transfer, along_mindspore, kind_of)
            fork = candidate       # MindSpore went another way than the float64 run: the copy goes on along it
        else:
            along_mindspore = None
        why = _unlike_twin(k + 1, losses, lrs) if twin is not None else ""
        if why:
            if reference == "float64":
                raise TrainingError(why)
            no_reference, dropped_at, twin, fork, along_mindspore = why, k + 1, None, None, None
            del losses[REFERENCE], lrs[REFERENCE]
        results = {side: RunResult(side) for side in (TORCH, MINDSPORE, REFERENCE)}
        for side in (TORCH, MINDSPORE, REFERENCE):
            if side in losses:
                results[side].add("loss", "output", np.float64(losses[side]) if side == REFERENCE
                                  else np.float32(losses[side]))
        _state(TORCH, transfer, results[TORCH], kind_of)
        _state(MINDSPORE, transfer, results[MINDSPORE], kind_of)
        if twin is not None:
            _twin_state(twin.model, transfer, results[REFERENCE], kind_of)
        report: CompareReport = compare_results(results[TORCH], results[MINDSPORE], rtol=rtol, atol=atol,
                                                reference=results[REFERENCE] if twin is not None else None,
                                                floor_ulps=FLOOR_ULPS * (k + 1), check_reference=False,
                                                actual_reference=along_mindspore)
        rows = report.rows
        if twin is not None:
            rows += kink_row(tapes.branches)
        largest_lr = max(largest_lr, abs(lrs[TORCH]))
        if lrs[MINDSPORE] is not None:
            rows.append(lr_row(k + 1, lrs[TORCH], lrs[MINDSPORE], largest_lr))
        flipped = {side: tapes.branches.flipped(side) for side in (TORCH, MINDSPORE)
                   if tapes.branches is not None and twin is not None and tapes.branches.flipped(side)}
        out.append(TrainingStep(k + 1, losses, lrs, rows, _divergence(results[TORCH], results[MINDSPORE]), flipped))

    rule = "the round-off rule against a float64 run, step by step"
    if twin is not None:
        verdict = rule
    elif dropped_at and dropped_at > 1:
        verdict = f"{rule} until step {dropped_at - 1}, then rtol/atol: {no_reference}"
    else:
        verdict = f"rtol/atol at every step{': ' + no_reference if no_reference else ''}"
    meta = {"verdict": verdict, "weights": choice.as_json(), "strict": strict, "steps": steps,
            "reference": ({"roundoff_factor": ROUNDOFF_FACTOR, "floor_ulps": FLOOR_ULPS} if twin is not None
                          else {"skipped": no_reference or "rtol/atol given"}),
            "transfer_warnings": list(transfer.warnings), "live": live.counts}
    return TrainingReport(out, setup, pieces, meta, [live.row()])


def _unlike_twin(step: int, losses: dict, lrs: dict) -> str:
    """Why the float64 run does not train as torch does (then it cannot measure torch's round-off), or "": its
    first loss off by more than REFERENCE_UNLIKE (it computes something else), or another rate at any step (its
    optimizer or schedule was rebuilt otherwise)."""
    if step == 1:
        gap = abs(losses[TORCH] - losses[REFERENCE])
        if gap > REFERENCE_UNLIKE * max(abs(losses[REFERENCE]), 1e-30):
            return (f"the float64 copy's first loss is {gap:.3g} from torch's ({losses[TORCH]:.7g}): it does not "
                    "compute what torch computes")
    if lrs[REFERENCE] != lrs[TORCH]:
        return (f"at step {step} the float64 copy trains at rate {lrs[REFERENCE]:.9g}, torch at {lrs[TORCH]:.9g}: "
                "its optimizer or schedule was not rebuilt as torch's is")
    return ""


def _kw(kwargs: dict) -> str:
    return ", ".join(f"{k}={v!r}" for k, v in kwargs.items())


def _dotted(obj) -> str:
    return f"{obj.__module__}.{obj.__qualname__}"


def _piece(torch_obj, ms_obj, given: bool) -> str:
    def name(o):
        return f"{type(o).__module__}.{type(o).__qualname__}"
    return f"{name(torch_obj)} -> {name(ms_obj)} ({'given' if given else 'mappings/training.yaml'})"
