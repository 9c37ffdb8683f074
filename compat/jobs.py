"""``prove_job``: a training script and its port, each run for N optimizer steps on one data stream, and judged.

    report = prove_job("train.py", steps=20)                    # the port: train.py translated (--scope model)
    report = prove_job("train.py", "ms/train.py", steps=20, argv=["--epochs", "1"])
    assert report.passed, str(report)

compare_training judges the pieces a test hands it; this judges the job as the user runs it: the script itself,
its loop, its clipping and schedule, its weight loading, run in this process (``runpy``, ``__name__ ==
"__main__"``, ``sys.argv`` set), each side in a fresh empty working folder of its own (``cwd=`` to run where the
script's files are). What makes the two runs comparable is taken where every script has it:

* **Steps** are optimizer steps: torch's ``Optimizer.step()`` (its global step hooks), MindSpore's optimizer
  Cells called (``optimizer(grads)``, and recompat.runtime's ``optimizer_step``). A run stops after ``steps`` of
  them, at the next model call, backward or step.
* **Losses** are what each side differentiates: torch's ``Tensor.backward()`` on a one-element tensor, the value
  MindSpore's ``value_and_grad`` functions return (the first one, under has_aux). Several per step are gradient
  accumulation; the counts must agree step by step.
* **Models** are the Modules and Cells with weights that a script calls from outside any other one, paired in
  the order of their first call. Unless torch's script loads its model's weights (``load_state_dict`` before the
  first call), torch's initial weights are copied into MindSpore's model at its first call (transfer_weights);
  a script that loads them has each side's own loading judged (a converted file that swaps statistics fails).
* **Data**: torch's random draws (torch.randn, randint, ..., the mappings' ``draws`` entries) and dropout masks
  are recorded and served to MindSpore's draws in call order (compat.draw_replay, compat.dropout_replay).

The verdict is compare_training's rule: a float64 run of torch's script (its models made float64 at their first
call, from the same initial weights, their floating inputs cast, the same draws) measures how far float32
round-off takes torch, and MindSpore's loss at step k and its final weights pass while at most ROUNDOFF_FACTOR
times as far from it, plus FLOOR_ULPS ulps per step. Where the float64 run cannot be made (it fails, takes other
steps, or its first loss is not torch's), fixed tolerances judge, and the report says why.

Memory: each side's live tensors are counted after up to 12 steps, with the process's resident memory; a MindSpore
run whose live tensors grow by one a step while torch's do not fails (compat.live says how).

Not seen: ``torch.autograd.backward(loss)`` and ``mindspore.grad`` (their losses), draws through names bound
before the run (``from torch import randn`` in an already imported module), and data loaded from files (each
side's own: it must be the same data). ReLU and max-pool decisions within round-off of a kink are not replayed
(compare_training does that): a long run through many of them may part further than round-off.
"""
from __future__ import annotations

import contextlib
import copy
import functools
import io
import os
import runpy
import sys
import tempfile
import time
import traceback
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Callable, Sequence

import numpy as np

from recompat.constants import DIRECTIONS

from .compare import FLOOR_ULPS, REFERENCE_UNLIKE, ROUNDOFF_FACTOR, CompareRow, compare_results
from .live import live_tensor_row, live_tensors, resident_bytes, sampled
from .runs import RunResult
from .tapes import Tapes

TORCH, MINDSPORE, REFERENCE = "torch", "MindSpore", "torch (float64 reference)"


class JobError(ValueError):
    """A job prove_job cannot run as asked: a script that is missing, steps that are no positive number."""


class _Enough(BaseException):
    """Raised into a script once it has taken its steps: a BaseException, so that its own `except Exception`
    does not swallow it."""


@dataclass
class SideRun:
    """What one run of a script did, step by step."""

    side: str
    script: str
    losses: list[list[float]] = field(default_factory=list)    # per step: each loss differentiated
    live: dict[int, int] = field(default_factory=dict)         # step -> live tensors after it
    rss: dict[int, int] = field(default_factory=dict)          # step -> resident bytes after it
    models: list[Any] = field(default_factory=list)            # in the order of their first call
    loaded: list[bool] = field(default_factory=list)           # whether the script loaded each model's weights
    copied: list[bool] = field(default_factory=list)           # MindSpore: torch's initial weights copied in
    error: str = ""            # the script's exception, its last lines
    output: str = ""           # the tail of what the script printed
    seconds: float = 0.0

    @property
    def steps(self) -> int:
        return len(self.losses)

    def to_dict(self) -> dict:
        return {"side": self.side, "script": self.script, "steps": self.steps, "losses": self.losses,
                "live": {str(k): v for k, v in self.live.items()}, "rss": {str(k): v for k, v in self.rss.items()},
                "models": [type(m).__name__ for m in self.models], "loaded": self.loaded, "copied": self.copied,
                "error": self.error, "output": self.output, "seconds": round(self.seconds, 3)}


@dataclass
class JobReport:
    torch_script: str            # the torch side (the script, or its port), as shown
    mindspore_script: str        # the MindSpore side
    steps: int
    runs: dict[str, SideRun]
    rows: list[CompareRow]
    verdict: str
    to: str = "mindspore"        # the port's framework: the script is the other one's

    @property
    def passed(self) -> bool:
        return all(r.passed for r in self.rows)

    @property
    def failures(self) -> list[CompareRow]:
        return [r for r in self.rows if not r.passed]

    def curves(self) -> dict[str, list[float]]:
        """Each side's loss per step (the mean of a step's losses where it accumulates)."""
        return {side: [float(np.mean(ls)) if ls else float("nan") for ls in run.losses]
                for side, run in self.runs.items()}

    def to_dict(self) -> dict:
        first = next((r for r in self.rows if not r.passed and r.name.startswith("step ")), None)
        return {"kind": "recompat-job", "torch_script": self.torch_script, "mindspore_script": self.mindspore_script,
                "to": self.to,
                "steps": self.steps,
                "passed": self.passed, "verdict": self.verdict, "rows": [r.to_dict() for r in self.rows],
                "runs": {side: run.to_dict() for side, run in self.runs.items()},
                "training": {"loss": self.curves(), "steps": self.runs[TORCH].steps,
                             "first_failure": int(first.name.split()[1]) if first else None}}

    def __str__(self) -> str:
        lines = [f"job: {self.torch_script} (torch) against {self.mindspore_script} (MindSpore), {self.steps} steps "
                 f"asked: {'PASSED' if self.passed else 'FAILED'}", f"  judged by {self.verdict}"]
        for side, run in self.runs.items():
            what = f"{run.steps} steps in {run.seconds:.2f} s"
            if run.error:
                what += f"; it failed: {run.error.strip().splitlines()[-1]}"
            lines.append(f"  {side}: {what}")
        curves = self.curves()
        shown = sorted({1, *range(1, self.runs[TORCH].steps + 1, max(1, self.runs[TORCH].steps // 8)),
                        self.runs[TORCH].steps} - {0})
        lines.append("  loss  " + "  ".join(f"{side}" for side in curves))
        for k in shown:
            lines.append(f"    step {k:>4}: " + "  ".join(
                f"{curves[side][k - 1]:.7g}" if k <= len(curves[side]) else "-" for side in curves))
        for row in self.rows:
            if not row.passed or row.kind in ("memory", "weights"):
                lines.append(f"  {'ok  ' if row.passed else 'FAIL'} {row.name}: {row.message or _errors(row)}")
        return "\n".join(lines)


def _errors(row: CompareRow) -> str:
    parts = [f"max abs err {row.max_abs_err:.3g}" if row.max_abs_err is not None else ""]
    if row.ref_err_expected is not None and row.ref_err_actual is not None:
        parts.append(f"from float64: torch {row.ref_err_expected:.3g}, MindSpore {row.ref_err_actual:.3g}")
    return "; ".join(p for p in parts if p)


# --------------------------------------------------------------------------------------------------- a run

class _Watch:
    """One run's record: its steps, losses and models, and when to stop."""

    def __init__(self, run: SideRun, steps: int, tensor_type: type, phases):
        self.run, self.steps, self.tensor_type = run, steps, tensor_type
        self.pending: list[float] = []
        self.samples = sampled(steps)
        self.phases = [] if phases is None else phases.phases
        self.in_backward = 0
        self.in_forward = 0      # MindSpore: within the differentiated function (inside a gradient call)
        self.seen: set[int] = set()      # ids of the modules already called once
        self._set_phase()

    def _set_phase(self) -> None:
        """Forward outside a backward, and in MindSpore's differentiated function inside its gradient call; a
        recomputation elsewhere in a backward."""
        on = self.in_forward > 0 or not self.in_backward
        for phase in self.phases:
            phase.forward = on

    @contextlib.contextmanager
    def _within(self, part: str):
        setattr(self, part, getattr(self, part) + 1)
        self._set_phase()
        try:
            yield
        finally:
            setattr(self, part, getattr(self, part) - 1)
            self._set_phase()

    def backward(self):
        """Within a backward (torch's, or MindSpore's gradient call): draws there are recomputations."""
        return self._within("in_backward")

    def forward(self):
        """MindSpore's differentiated function: its forward, inside the gradient call."""
        return self._within("in_forward")

    def check(self) -> None:
        if self.run.steps >= self.steps:
            raise _Enough

    def loss(self, value) -> None:
        array = np.asarray(value, dtype=np.float64)
        if array.size == 1:
            self.pending.append(float(array.reshape(())))

    def stepped(self) -> None:
        self.run.losses.append(self.pending)
        self.pending = []
        k = self.run.steps
        if k in self.samples:
            self.run.live[k] = live_tensors(self.tensor_type)
            self.run.rss[k] = resident_bytes()

    def first_call(self, model, parts) -> int:
        """The model's index among the run's models, on its first call from outside any other; its parts (itself
        among them) are never models of their own."""
        self.seen.update(id(p) for p in parts)
        self.run.models.append(model)
        return len(self.run.models) - 1


def _holds_weights_torch(module) -> bool:
    return next(iter(module.state_dict()), None) is not None


def _floating_to_double(value):
    import torch

    if isinstance(value, torch.Tensor) and value.is_floating_point():
        return value.double()
    if isinstance(value, (tuple, list)):
        return type(value)(_floating_to_double(v) for v in value)
    return value


@contextlib.contextmanager
def _watching_torch(watch: _Watch, initial: list | None, float64: bool):
    """torch's hooks for one run. ``initial``: the float32 run appends a copy of each model as it is at its first
    call; the float64 run loads them (where its script loads no weights of its own)."""
    import torch
    from torch.nn.modules import module as torch_module
    from torch.optim import optimizer as torch_optimizer

    depth = [0]
    loaded: set[int] = set()

    def pre(module, args):
        if watch.in_backward:       # a recomputation (early stop may end it by an exception: no post hook)
            return None
        top = depth[0] == 0
        if top:
            watch.check()
        depth[0] += 1
        if not top or id(module) in watch.seen or not _holds_weights_torch(module):
            return _floating_to_double(args) if float64 and top else None
        i = watch.first_call(module, module.modules())
        watch.run.loaded.append(id(module) in loaded)
        if float64:
            if not watch.run.loaded[i] and i < len(initial):
                module.load_state_dict(initial[i].state_dict())
            module.double()
            return _floating_to_double(args)
        if initial is not None:
            initial.append(copy.deepcopy(module))
        return None

    def post(module, args, out):
        if not watch.in_backward:
            depth[0] -= 1

    def pre_step(optimizer, args, kwargs):
        watch.check()

    def post_step(optimizer, args, kwargs):
        watch.stepped()

    original_backward = torch.Tensor.backward
    original_load = torch.nn.Module.load_state_dict

    @functools.wraps(original_backward)
    def backward(self, *args, **kwargs):
        watch.check()
        if self.numel() == 1:
            watch.loss(self.detach().double().cpu().numpy())
        with watch.backward():
            return original_backward(self, *args, **kwargs)

    @functools.wraps(original_load)
    def load_state_dict(self, *args, **kwargs):
        loaded.update(id(m) for m in self.modules())
        return original_load(self, *args, **kwargs)

    handles = [torch_module.register_module_forward_pre_hook(pre), torch_module.register_module_forward_hook(post),
               torch_optimizer.register_optimizer_step_pre_hook(pre_step),
               torch_optimizer.register_optimizer_step_post_hook(post_step)]
    torch.Tensor.backward, torch.nn.Module.load_state_dict = backward, load_state_dict
    try:
        yield
    finally:
        torch.Tensor.backward, torch.nn.Module.load_state_dict = original_backward, original_load
        for h in handles:
            h.remove()


def _optimizer_types() -> tuple[type, ...]:
    import mindspore

    types = [mindspore.nn.Optimizer]
    with contextlib.suppress(ImportError, AttributeError):
        from mindspore.experimental import optim
        types.append(optim.Optimizer)
    return tuple(types)


@contextlib.contextmanager
def _watching_mindspore(watch: _Watch, torch_run: SideRun, initial: list):
    """MindSpore's hooks for one run: Cell calls (models, optimizers) and value_and_grad (losses, phases); jit
    functions run as written (PyNative), since the calls inside a compiled graph are not seen."""
    import mindspore

    from .weights import transfer_weights

    optimizers = _optimizer_types()
    depth = [0]
    original_call = mindspore.nn.Cell.__call__
    original_vag = mindspore.value_and_grad

    def first_call(cell) -> None:
        i = watch.first_call(cell, [c for _, c in cell.cells_and_names()])
        copied = i < len(torch_run.loaded) and not torch_run.loaded[i]
        if copied:    # before its first op runs: the forward (inside a gradient call too) reads them
            transfer_weights(initial[i], cell, copy=True)
        watch.run.copied.append(copied)

    @functools.wraps(original_call)
    def call(self, *args, **kwargs):
        if isinstance(self, optimizers):
            watch.check()
            out = original_call(self, *args, **kwargs)
            if depth[0] == 0:
                watch.stepped()
            return out
        top = depth[0] == 0 and (not watch.in_backward or watch.in_forward)
        if top:
            watch.check()
            if id(self) not in watch.seen and next(iter(self.get_parameters()), None) is not None:
                first_call(self)
        depth[0] += 1
        try:
            return original_call(self, *args, **kwargs)
        finally:
            depth[0] -= 1

    @functools.wraps(original_vag)
    def value_and_grad(fn, *args, **kwargs):
        @functools.wraps(fn)
        def differentiated(*a, **k):
            with watch.forward():
                return fn(*a, **k)
        grad_fn = original_vag(differentiated, *args, **kwargs)

        @functools.wraps(grad_fn)
        def run(*a, **k):
            watch.check()
            with watch.backward():
                out = grad_fn(*a, **k)
            value = out[0]
            while isinstance(value, (tuple, list)) and value:
                value = value[0]
            if hasattr(value, "asnumpy"):
                watch.loss(value.asnumpy())
            return out
        return run

    def jit(function=None, *args, **kwargs):   # a graph's calls are not seen from Python: they run eagerly
        return function if callable(function) else (lambda f: f)

    patched = [(mindspore.nn.Cell, "__call__", call), (mindspore, "value_and_grad", value_and_grad),
               (mindspore.ops, "value_and_grad", value_and_grad), (mindspore, "jit", jit)]
    saved = [(owner, name, getattr(owner, name)) for owner, name, _ in patched]
    for owner, name, value in patched:
        setattr(owner, name, value)
    try:
        yield
    finally:
        for owner, name, value in saved:
            setattr(owner, name, value)


def _run_script(path: Path, argv: Sequence[str], cwd: Path | None, watch: _Watch, hooks) -> None:
    """Run the script as `python path argv...` would, in ``cwd`` (a fresh empty folder without one), under
    ``hooks``, until it ends or has taken its steps; its error, if any, into the run."""
    run = watch.run
    folder = str(path.parent)
    saved = (list(sys.argv), list(sys.path), os.getcwd())
    printed = io.StringIO()
    start = time.perf_counter()
    with tempfile.TemporaryDirectory(prefix="recompat-job-") as scratch:
        try:
            sys.argv, sys.path = [str(path), *argv], [folder, *sys.path]
            os.chdir(cwd or scratch)
            _forget_modules(folder)
            with hooks, contextlib.redirect_stdout(printed):
                runpy.run_path(str(path), run_name="__main__")
        except _Enough:
            pass
        except SystemExit as exc:
            if exc.code not in (None, 0):
                run.error = f"SystemExit({exc.code!r})"
        except Exception:     # the script's own failure: the report shows it
            run.error = _script_traceback(path)
        finally:
            sys.argv, sys.path = saved[0], saved[1]
            os.chdir(saved[2])
            _forget_modules(folder)
    run.seconds = time.perf_counter() - start
    run.output = printed.getvalue()[-2000:]


def _script_traceback(path: Path) -> str:
    """The exception and the frames from the script's folder on (the hooks' frames left out)."""
    kind, exc, tb = sys.exc_info()
    frames = [f for f in traceback.extract_tb(tb) if not f.filename.startswith(str(Path(__file__).parent))]
    mine = [f for f in frames if f.filename.startswith(str(path.parent))] or frames
    text = "".join(traceback.format_list(mine[-4:])) + "".join(traceback.format_exception_only(kind, exc))
    if isinstance(exc, FileNotFoundError):
        text += ("(each script runs in an empty folder of its own; give cwd= (--cwd DIR) to run them where their "
                 "files are)\n")
    return text


def _forget_modules(folder: str) -> None:
    """Drop the modules imported from the script's folder: the other side's script imports its own of the same
    names (model.py beside train.py)."""
    for name, module in list(sys.modules.items()):
        file = getattr(module, "__file__", None) or ""
        if file.startswith(folder + os.sep):
            del sys.modules[name]


# --------------------------------------------------------------------------------------------------- verdict

def _loss_rows(runs: dict[str, SideRun], reference: bool) -> list[CompareRow]:
    t, m = runs[TORCH], runs[MINDSPORE]
    rows = []
    for k in range(min(t.steps, m.steps)):
        tl, ml = t.losses[k], m.losses[k]
        name = f"step {k + 1} loss"
        if len(tl) != len(ml):
            rows.append(CompareRow.verdict(
                name, "output", False, f"torch differentiates {len(tl)} loss(es) in step {k + 1}, MindSpore "
                f"{len(ml)}: the port accumulates gradients otherwise (a backward per micro-batch before one step), or "
                "takes a step torch skips (a loss scaler's, on an overflow) or skips one torch takes"))
            continue
        results = {side: RunResult(side) for side in (TORCH, MINDSPORE, REFERENCE)}
        for side, dtype in ((TORCH, np.float32), (MINDSPORE, np.float32), (REFERENCE, np.float64)):
            if side in runs and k < runs[side].steps:
                for j, value in enumerate(runs[side].losses[k]):
                    results[side].add(name if len(tl) == 1 else f"{name} {j + 1}", "output", dtype(value))
        report = compare_results(results[TORCH], results[MINDSPORE],
                                 reference=results[REFERENCE] if reference else None, equal_nan=True,
                                 floor_ulps=FLOOR_ULPS * (k + 1), check_reference=False)
        rows += report.rows
    return rows


def _state_rows(runs: dict[str, SideRun], reference: bool, steps: int) -> list[CompareRow]:
    from .weights import transfer_weights

    t, m = runs[TORCH], runs[MINDSPORE]
    results = {side: RunResult(side) for side in (TORCH, MINDSPORE, REFERENCE)}
    rows = []
    for i, (tm, mm) in enumerate(zip(t.models, m.models)):
        prefix = f"{type(tm).__name__}." if len(t.models) > 1 else ""
        transfer = transfer_weights(tm, mm, copy=False, strict=False)
        if not transfer.ok:
            rows.append(CompareRow.verdict(f"model {i + 1}", "weights", False,
                                           f"{type(tm).__name__} and {type(mm).__name__} do not pair: "
                                           + "; ".join(map(str, transfer.problems[:3]))))
            continue
        buffers = set(transfer.buffers)
        twin = runs[REFERENCE].models[i] if reference else None
        tensors = {} if twin is None else {**dict(twin.named_parameters(remove_duplicate=False)),
                                           **dict(twin.named_buffers(remove_duplicate=False))}
        for name, tv, mv in transfer.values():
            kind = "buffer" if name in buffers else "param"
            results[TORCH].add(prefix + name, kind, tv)
            results[MINDSPORE].add(prefix + name, kind, mv)
            if name in tensors:
                results[REFERENCE].add(prefix + name, kind, tensors[name].detach().cpu().numpy())
    report = compare_results(results[TORCH], results[MINDSPORE], reference=results[REFERENCE] if reference else None,
                             equal_nan=True, floor_ulps=FLOOR_ULPS * steps, check_reference=False)
    for row in report.rows:
        row.name = f"final {row.name}"
    return rows + report.rows


def _unlike(runs: dict[str, SideRun]) -> str:
    """Why the float64 run cannot measure torch's round-off, or ""."""
    t, r = runs[TORCH], runs.get(REFERENCE)
    if r is None:
        return "no float64 run was asked for"
    if r.error:
        return f"the float64 run failed ({r.error.strip().splitlines()[-1]})"
    if r.steps != t.steps:
        return f"the float64 run took {r.steps} steps, torch {t.steps}"
    counts = [(k, len(a), len(b)) for k, (a, b) in enumerate(zip(t.losses, r.losses), 1) if len(a) != len(b)]
    if counts:
        k, a, b = counts[0]
        return (f"in step {k} the float64 run differentiated {b} loss(es), torch {a} (a step skipped on one side: "
                "a loss scaler's overflow, which float64 does not reach)")
    if [type(x).__name__ for x in r.models] != [type(x).__name__ for x in t.models]:
        return "the float64 run called other models than torch"
    if t.steps and t.losses[0]:
        gap = abs(t.losses[0][0] - r.losses[0][0])
        if gap > REFERENCE_UNLIKE * max(abs(r.losses[0][0]), 1e-30):
            return (f"the float64 run's first loss is {gap:.3g} from torch's ({t.losses[0][0]:.7g}): it does not "
                    "compute what torch computes")
    return ""


def _run_rows(runs: dict[str, SideRun], steps: int) -> list[CompareRow]:
    t, m = runs[TORCH], runs[MINDSPORE]
    rows = []
    for run in (t, m):
        if run.error:
            rows.append(CompareRow.verdict(f"{run.side} script", "run", False,
                                           f"it failed after {run.steps} of {steps} steps:\n{run.error.rstrip()}"))
    if t.steps != m.steps and not (t.error or m.error):
        rows.append(CompareRow.verdict("steps", "run", False, f"torch took {t.steps} optimizer steps, MindSpore "
                                       f"{m.steps}: the scripts do not train alike"))
    if not t.steps and not t.error:
        rows.append(CompareRow.verdict("steps", "run", False, f"{t.script} took no optimizer step: nothing to judge "
                                       "(is it the training script, and does it train with these arguments?)"))
    if len(t.models) != len(m.models):
        rows.append(CompareRow.verdict("models", "weights", False, f"torch's script called {len(t.models)} models "
                                       f"with weights, MindSpore's {len(m.models)}"))
    if m.models:
        how = ["as its script loads them" if not c else "torch's initial weights copied" for c in m.copied]
        rows.append(CompareRow.verdict("weights", "weights", True, "; ".join(
            f"{type(x).__name__}: {h}" for x, h in zip(m.models, how))))
    return rows


# ------------------------------------------------------------------------------------------------------ API

def translate_script(script: Path, into: Path, to: str = "mindspore") -> Path:
    """The script's folder translated (--scope model, into ``to``) into ``into``; the translated script's path."""
    from recompat.translator import engine

    opts = engine.Options(paths=[str(script.parent)], to=to, style="function" if to == "mindspore" else None,
                          scope="model", output=str(into), quiet=True)
    result = engine.run(opts, stdout=io.StringIO(), stderr=io.StringIO())
    if result.exit_code not in (0, 1):
        raise JobError(f"{script}: its folder could not be translated (exit {result.exit_code}): run "
                       f"`recompat translate --scope model --to {to} {script.parent}` to see why")
    return into / script.name


def prove_job(script, port=None, *, to: str = "mindspore", steps: int = 10, argv: Sequence[str] = (),
              port_argv: Sequence[str] | None = None, cwd=None, reference: str | None = "auto",
              progress: Callable[[str], None] | None = None) -> JobReport:
    """Run ``script`` and its port into ``to`` (``port``, or the script's folder translated) for ``steps`` optimizer
    steps each, with ``argv`` (the port with ``port_argv`` where given: it may load its own files), and judge them
    (the module docstring says how). ``to``: "mindspore" (the script is torch's) or "torch" (the script is
    MindSpore's; the torch side is then the port). ``reference``: "auto" (a float64 run where one can be made), or
    None (fixed tolerances). ``progress``: told what runs. JobError for a job that cannot start."""
    import mindspore
    import torch

    if to not in DIRECTIONS:
        raise JobError(f"to must be one of {', '.join(DIRECTIONS)}, not {to!r}")
    script = Path(script).resolve()
    if not script.is_file():
        raise JobError(f"{script}: no such script")
    if not isinstance(steps, int) or isinstance(steps, bool) or steps < 1:
        raise JobError(f"steps must be a positive int, not {steps!r}")
    if reference not in ("auto", None):
        raise JobError(f"reference must be 'auto' or None, not {reference!r}")
    cwd = Path(cwd).resolve() if cwd is not None else None
    say = progress or (lambda _text: None)
    with contextlib.ExitStack() as stack:
        if port is None:
            port = translate_script(script, Path(stack.enter_context(
                tempfile.TemporaryDirectory(prefix="recompat-port-"))) / "port", to)
            shown = f"{script.name} translated"
        else:
            port = Path(port).resolve()
            if not port.is_file():
                raise JobError(f"{port}: no such script")
            shown = str(port)
        # each side's script and arguments: the port's are port_argv where given
        port_args = list(argv if port_argv is None else port_argv)
        ported = to == "mindspore"
        torch_script, ms_script = (script, port) if ported else (port, script)
        args = {TORCH: list(argv), MINDSPORE: port_args} if ported else {TORCH: port_args, MINDSPORE: list(argv)}
        args[REFERENCE] = args[TORCH]
        tapes = Tapes.for_pair("pynative", kinks=False)
        runs: dict[str, SideRun] = {}
        initial: list = []

        def go(side, script, tensor_type, context, hooks):
            say(f"{side}: running {script.name} for {steps} steps")
            with context() as phases:
                watch = _Watch(SideRun(side, str(script)), steps, tensor_type, phases)
                _run_script(script, [str(a) for a in args[side]], cwd, watch, hooks(watch))
            runs[side] = watch.run
            say(f"{side}: {watch.run.steps} steps in {watch.run.seconds:.2f} s"
                + (" (it failed)" if watch.run.error else ""))

        go(TORCH, torch_script, torch.Tensor, tapes.torch, lambda w: _watching_torch(w, initial, float64=False))
        go(MINDSPORE, ms_script, mindspore.Tensor, tapes.mindspore,
           lambda w: _watching_mindspore(w, runs[TORCH], initial))
        if reference is not None:
            go(REFERENCE, torch_script, torch.Tensor, tapes.reference,
               lambda w: _watching_torch(w, initial, float64=True))
    why = _unlike(runs)
    use_reference = not why
    rows = _run_rows(runs, steps) + _loss_rows(runs, use_reference)
    failed = any(runs[side].error for side in (TORCH, MINDSPORE))    # then the weights stand mid-job: not judged
    if runs[TORCH].models and runs[MINDSPORE].models and not failed:
        rows += _state_rows(runs, use_reference, min(runs[TORCH].steps, runs[MINDSPORE].steps))
    rows.append(live_tensor_row(runs[TORCH].live, runs[MINDSPORE].live,
                                {side: runs[side].rss for side in (TORCH, MINDSPORE)}))
    rule = "the round-off rule against a float64 run of torch's script" if use_reference else \
        f"fixed tolerances ({why})"
    if not use_reference:
        runs.pop(REFERENCE, None)
    names = {TORCH: str(script), MINDSPORE: shown} if ported else {TORCH: shown, MINDSPORE: str(script)}
    return JobReport(names[TORCH], names[MINDSPORE], steps, runs, rows, rule, to)
