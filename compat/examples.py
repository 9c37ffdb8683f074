"""Paired model examples: one ``Example`` model per framework, proven equal by ``compare()``.

The core API set's paired examples (mappings/examples/<id>/) are model files, not scripts. Each side defines

* ``class Example``: an ``nn.Module`` (torch) or ``nn.Cell`` (MindSpore) built with no arguments;
* ``INPUTS``: a list of NumPy arrays, passed positionally;
* ``TRAINING`` (optional, default False): train mode (BatchNorm batch statistics) instead of eval mode;
* ``RTOL`` / ``ATOL`` (optional): judge by these tolerances instead of compare()'s default verdict, the round-off
  rule against a float64 run of the torch side (where the torch side cannot run in float64, compare() falls back
  to rtol/atol and this is where to set them).

An initializer's example (mappings/init.yaml, form initializer) holds no model: each side defines ``SHAPE`` and
``init(tensor)``, which fills the tensor and returns it; ``run_init_example`` proves the pair by the distribution of
what it draws (compat.examples: random streams differ between the frameworks, so never value by value).

``run_model_example(torch_path, mindspore_path)`` builds both (torch's weights seeded, then copied to MindSpore),
runs one forward and backward on each and compares outputs, gradients, buffers and the paired layers' settings.
It returns an ``ExampleRun`` whose ``text`` is what output.txt records: deterministic (shapes, the torch output's first values rounded, counts
and the verdict; never a raw error value, which varies with the machine's kernels). Anything wrong (a file that
does not import, no Example, settings or inputs that differ, weights that do not pair, a mismatch) raises
``ExampleError`` naming the file.
"""
from __future__ import annotations

import copy
import importlib.util
import itertools
import sys
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from recompat.constants import CROSS_ATOL, CROSS_RTOL

from .compare import CompareReport, compare

SHOWN = 4                   # how many of the output's first values output.txt shows

_counter = itertools.count()


class ExampleError(Exception):
    """A paired example that cannot run or does not agree; the message names the file. ``.report``: the
    CompareReport when the pair ran but differs (else None)."""

    def __init__(self, message: str, report: CompareReport | None = None):
        super().__init__(message)
        self.report = report


@dataclass
class ExampleRun:
    torch_path: Path
    mindspore_path: Path
    training: bool
    report: CompareReport
    text: str                   # what output.txt records

    @property
    def ok(self) -> bool:
        return self.report.passed


def load_module(path: str | Path, side: str):
    """Import the file at ``path`` as a fresh module under a unique name; sys.modules is left as it was."""
    path = Path(path)
    if not path.is_file():
        raise ExampleError(f"{path}: no such file — write the {side} side of the paired example")
    name = f"_recompat_example_{side}_{next(_counter)}"
    spec = importlib.util.spec_from_file_location(name, path)
    module = importlib.util.module_from_spec(spec)
    sys.modules[name] = module       # while it runs only: dataclasses and typing look their module up there
    try:
        spec.loader.exec_module(module)
    except Exception as exc:
        raise ExampleError(f"{path}: importing it raised {type(exc).__name__}: {exc}") from exc
    finally:
        sys.modules.pop(name, None)
    return module


def _setting(module, path: Path, name: str, default, kind):
    value = getattr(module, name, default)
    if value is None and default is None:
        return None
    if not isinstance(value, kind) or isinstance(value, bool) != (kind is bool):
        raise ExampleError(f"{path}: {name} = {value!r}: must be a {kind.__name__}")
    return value


def _inputs(module, path: Path) -> list[np.ndarray]:
    inputs = getattr(module, "INPUTS", None)
    if not isinstance(inputs, (list, tuple)) or not inputs or not all(isinstance(a, np.ndarray) for a in inputs):
        raise ExampleError(f"{path}: INPUTS must be a non-empty list of NumPy arrays (the model's positional "
                           "arguments)")
    return list(inputs)


def _example_class(module, path: Path, base, base_name: str):
    cls = getattr(module, "Example", None)
    if not (isinstance(cls, type) and issubclass(cls, base)):
        raise ExampleError(f"{path}: defines no class Example({base_name}) — the paired example's model must be "
                           "called Example")
    return cls


def _build(cls, path: Path):
    try:
        return cls()
    except Exception as exc:
        raise ExampleError(f"{path}: Example() raised {type(exc).__name__}: {exc}") from exc


def _values(a: np.ndarray) -> str:
    flat = np.asarray(a, dtype=np.float64).ravel()
    shown = " ".join(f"{v:.4f}" for v in np.round(flat[:SHOWN], 4) + 0.0)   # + 0.0: no "-0.0000"
    return shown + (" ..." if flat.size > SHOWN else "")


def _tol(x: float) -> str:
    return np.format_float_scientific(x, trim="-", exp_digits=1) if x else "0"   # 1e-4, 1.5e-4


def _text(report: CompareReport, expected, training: bool, rtol: float | None, atol: float | None) -> str:
    lines = []
    for name in expected.names("output"):
        a = expected.tensors[name]
        lines.append(f"{name} shape {tuple(int(s) for s in a.shape)}: {_values(a)}")
    kinds = {kind: sum(1 for r in report.rows if r.kind == kind) for kind in ("output", "input-grad", "param-grad",
                                                                              "buffer")}
    grads = kinds["input-grad"] + kinds["param-grad"]
    what = f"{kinds['output']} output{'s' if kinds['output'] != 1 else ''} and {grads} gradient{'s' if grads != 1 else ''}"
    if kinds["buffer"]:
        what += f" and {kinds['buffer']} buffer{'s' if kinds['buffer'] != 1 else ''}"
    if rtol is not None or atol is not None:
        def shown(x):
            return "default" if x is None else _tol(x)
        verdict = f"rtol {shown(rtol)}, atol {shown(atol)}"
    elif "skipped" in report.meta.get("reference", {}):
        verdict = "torch.testing's tolerances: the torch side did not run in float64"
    else:
        verdict = "the round-off rule against float64"
    lines.append(f"{'train' if training else 'eval'} mode: {what} agree ({verdict})")
    return "\n".join(lines) + "\n"


def run_model_example(torch_path: str | Path, mindspore_path: str | Path) -> ExampleRun:
    """Build both sides' Example, copy torch's weights into MindSpore's, run both once and compare; see the
    module docstring. ExampleError naming the file when anything is wrong or the two differ."""
    import mindspore
    import torch

    torch_path, mindspore_path = Path(torch_path), Path(mindspore_path)
    tm = load_module(torch_path, "torch")
    mm = load_module(mindspore_path, "mindspore")
    torch_cls = _example_class(tm, torch_path, torch.nn.Module, "nn.Module")
    ms_cls = _example_class(mm, mindspore_path, mindspore.nn.Cell, "nn.Cell")
    settings = {}
    defaults = (("TRAINING", False, bool), ("RTOL", None, float), ("ATOL", None, float))
    for name, default, kind in defaults:
        t, m = _setting(tm, torch_path, name, default, kind), _setting(mm, mindspore_path, name, default, kind)
        if t != m:
            raise ExampleError(f"{mindspore_path}: {name} = {m!r}, but {torch_path} has {t!r} — both sides must "
                               "use the same setting")
        settings[name] = t
    inputs = _inputs(tm, torch_path)
    ms_inputs = _inputs(mm, mindspore_path)
    if len(inputs) != len(ms_inputs) or not all(a.dtype == b.dtype and np.array_equal(a, b)
                                                for a, b in zip(inputs, ms_inputs)):
        raise ExampleError(f"{mindspore_path}: INPUTS differ from {torch_path}'s — both sides must run on the same "
                           "arrays")
    with torch.random.fork_rng(devices=[]):   # seeded weights, and the caller's torch RNG left as it was
        torch.manual_seed(0)
        torch_model = _build(torch_cls, torch_path)
    ms_model = _build(ms_cls, mindspore_path)
    training, rtol, atol = settings["TRAINING"], settings["RTOL"], settings["ATOL"]
    torch_model.train(training)
    ms_model.set_train(training)
    shown = copy.deepcopy(torch_model)     # for the values output.txt shows: compare keeps only the comparison
    from .runs import run_torch
    from .weights import WeightTransferError

    _forward_alone(ms_model, inputs, mindspore_path)
    try:
        report = compare(torch_model, ms_model, inputs, rtol=rtol, atol=atol, weights="torch")
    except WeightTransferError as exc:
        raise ExampleError(f"{mindspore_path}: its Example does not hold the same weights as {torch_path}'s:\n"
                           f"{exc}") from exc
    except Exception as exc:
        raise ExampleError(f"{mindspore_path} / {torch_path}: running the pair raised {type(exc).__name__}: "
                           f"{exc}") from exc
    if not report.passed:
        raise ExampleError(f"{mindspore_path}: its Example differs from {torch_path}'s "
                           f"({'train' if training else 'eval'} mode, torch's weights):\n{report}", report)
    expected = run_torch(shown, inputs, seed=0)
    return ExampleRun(torch_path, mindspore_path, training, report,
                      _text(report, expected, training, rtol, atol))


def _forward_alone(cell, inputs: list[np.ndarray], path: Path) -> None:
    """MindSpore's forward once, outside any gradient, before compare(): an op with no kernel on this device fails
    here with its own error. Inside a gradient MindSpore 2.10 reports it too, but the process was seen to crash in
    a later gradient (a segmentation fault in end_graph), taking a whole `recompat prove` run with it."""
    import mindspore

    try:
        cell(*[mindspore.Tensor(a) for a in inputs])
    except Exception as exc:
        raise ExampleError(f"{path}: its Example's forward raised {type(exc).__name__}: "
                           f"{str(exc).strip().splitlines()[0] if str(exc).strip() else ''}") from exc


# ------------------------------------------------------------------------------- training pairs' examples

TRAINING_STEPS = 100        # how long a training pair's example trains (the "correct pairs pass 100 steps")


def run_training_example(torch_path: str | Path, mindspore_path: str | Path, steps: int = TRAINING_STEPS) -> str:
    """A training pair's example (mappings/training.yaml): the torch file defines ``Example``, ``BATCHES`` (a list of
    (inputs, target)) and ``training(model)`` (compare_training's torch keyword arguments: loss, optimizer,
    schedule, clip_grad_norm); the MindSpore file defines ``Example`` only. Its pieces are built from the entries,
    so this proves them. Returns what output.txt records: torch's loss at a few steps (4 digits) and the verdict.
    ExampleError naming the file when it cannot run or does not agree."""
    import mindspore
    import torch

    from .training import TrainingError, compare_training

    torch_path, mindspore_path = Path(torch_path), Path(mindspore_path)
    tm, mm = load_module(torch_path, "torch"), load_module(mindspore_path, "mindspore")
    torch_cls = _example_class(tm, torch_path, torch.nn.Module, "nn.Module")
    ms_cls = _example_class(mm, mindspore_path, mindspore.nn.Cell, "nn.Cell")
    batches, setup = getattr(tm, "BATCHES", None), getattr(tm, "training", None)
    if not isinstance(batches, list) or not batches or not callable(setup):
        raise ExampleError(f"{torch_path}: a training example defines BATCHES (a list of (inputs, target)) and "
                           "training(model) (the loss, optimizer, ... compare_training takes)")
    with torch.random.fork_rng(devices=[]):
        torch.manual_seed(0)
        torch_model = _build(torch_cls, torch_path)
    ms_model = _build(ms_cls, mindspore_path)
    try:
        report = compare_training(torch_model, ms_model, batches, steps=steps, weights="torch", **setup(torch_model))
    except (TrainingError, TypeError) as exc:
        raise ExampleError(f"{torch_path}: {exc}") from exc
    if not report.passed:
        raise ExampleError(f"{mindspore_path} / {torch_path}: the pair does not train alike:\n{report}")
    losses = report.loss_curves()["torch"]
    shown = [k for k in (1, 10, steps) if k <= steps]
    lines = [f"loss at step {k}: {losses[k - 1]:.4f}" for k in dict.fromkeys(shown)]
    lines.append(f"{steps} training steps agree ({report.meta['verdict']})")
    return "\n".join(lines) + "\n"


# ------------------------------------------------------------------------------------ initializers' examples

KS_ALPHA = 1e-3             # the two-sample Kolmogorov-Smirnov test's level: a correct pair fails it 1 time in 1000
KS_FACTOR = 1.949           # sqrt(-ln(KS_ALPHA / 2) / 2): the critical distance is this x sqrt((n + m) / (n m))
START = 7.0                 # what the tensor holds before init: no initializer draws it, so a fill that does nothing fails


def ks_distance(a: np.ndarray, b: np.ndarray) -> float:
    """The two-sample Kolmogorov-Smirnov statistic: the largest gap between the two empirical distributions."""
    a, b = np.sort(a.ravel()), np.sort(b.ravel())
    at = np.concatenate([a, b])
    return float(np.abs(np.searchsorted(a, at, side="right") / a.size
                        - np.searchsorted(b, at, side="right") / b.size).max())


def run_init_example(torch_path: str | Path, mindspore_path: str | Path) -> str:
    """An initializer's pair: each side's ``init`` fills a tensor of ``SHAPE`` holding START (torch: a tensor; MindSpore: a
    Parameter, what models hold) from a seeded generator and must return it (an in-place method's pair, form assigned,
    too). A constant fill must give the same value everywhere on both sides (within CROSS_RTOL/CROSS_ATOL: arithmetic
    on a fill, erfinv_, rounds); a random one the same distribution (two-sample Kolmogorov-Smirnov at level
    KS_ALPHA). Returns what output.txt records (torch's standard deviation to 2 digits, no drawn value); ExampleError
    naming the file when a side cannot run, fills nothing, returns something else than the tensor, or draws
    otherwise."""
    import mindspore
    import torch

    torch_path, mindspore_path = Path(torch_path), Path(mindspore_path)
    tm, mm = load_module(torch_path, "torch"), load_module(mindspore_path, "mindspore")
    shape = _setting(tm, torch_path, "SHAPE", None, tuple)
    if not shape or _setting(mm, mindspore_path, "SHAPE", None, tuple) != shape:
        raise ExampleError(f"{mindspore_path}: an initializer's example defines the same SHAPE (a tuple of sizes) on "
                           f"both sides as {torch_path}")
    drawn = {}
    for side, module, path in (("torch", tm, torch_path), ("mindspore", mm, mindspore_path)):
        if not callable(getattr(module, "init", None)):
            raise ExampleError(f"{path}: an initializer's example defines init(tensor), which fills it and returns it")
        if side == "torch":
            with torch.random.fork_rng(devices=[]):
                torch.manual_seed(0)
                tensor = torch.full(shape, START)
                returned = _call(module, path, "init", tensor)
            drawn[side] = tensor.numpy()
        else:
            mindspore.set_seed(0)           # process-global, as run_mindspore's
            tensor = mindspore.Parameter(mindspore.Tensor(np.full(shape, START, np.float32)), name="filled")
            returned = _call(module, path, "init", tensor)
            drawn[side] = tensor.asnumpy()
        if returned is not tensor:
            raise ExampleError(f"{path}: init(tensor) returned {type(returned).__name__}, not the tensor it filled")
    t, m = drawn["torch"], drawn["mindspore"]
    if np.all(t == START):
        raise ExampleError(f"{torch_path}: init(tensor) left every value at {START:g}, what the tensor held: it fills "
                           "nothing, so the pair proves nothing")
    if np.all(t == t.flat[0]):      # a fill, or arithmetic on one (x.erfinv_()): float32 round-off allowed
        if not np.allclose(m, t.flat[0], rtol=CROSS_RTOL, atol=CROSS_ATOL):
            raise ExampleError(f"{mindspore_path}: torch fills every value with {t.flat[0]:g}; MindSpore's values "
                               f"range from {m.min():g} to {m.max():g}")
        return f"SHAPE {shape}: every value {t.flat[0]:.6g} on both sides\n"
    _check_same_distribution(t, m, torch_path, mindspore_path)
    return (f"SHAPE {shape}: {t.size} values drawn on each side, std {t.std():.2g}; the same distribution "
            f"(two-sample Kolmogorov-Smirnov, level {KS_ALPHA:g})\n")


def _check_same_distribution(t: np.ndarray, m: np.ndarray, torch_path: Path, mindspore_path: Path) -> None:
    """ExampleError naming the file unless MindSpore's values are drawn from torch's distribution (two-sample
    Kolmogorov-Smirnov at level KS_ALPHA)."""
    distance, critical = ks_distance(t, m), KS_FACTOR * np.sqrt((t.size + m.size) / (t.size * m.size))
    if distance >= critical:
        raise ExampleError(f"{mindspore_path}: MindSpore draws another distribution than {torch_path}: two-sample "
                           f"Kolmogorov-Smirnov distance {distance:.3g} >= {critical:.3g} (level {KS_ALPHA:g}); "
                           f"mean {t.mean():.3g} vs {m.mean():.3g}, std {t.std():.3g} vs {m.std():.3g}, range "
                           f"[{t.min():.3g}, {t.max():.3g}] vs [{m.min():.3g}, {m.max():.3g}]")


def run_draw_example(torch_path: str | Path, mindspore_path: str | Path) -> str:
    """A random function's pair (an entry with ``draws``): each side's ``draw()`` returns what it draws, from a seeded
    generator. The two must have the same shape and dtype, and the same distribution (two-sample
    Kolmogorov-Smirnov at level KS_ALPHA): the frameworks' generators differ, so never value by value. Returns what
    output.txt records (no drawn value); ExampleError naming the file when a side cannot run, returns no tensor,
    draws a constant or draws otherwise."""
    import mindspore
    import torch

    torch_path, mindspore_path = Path(torch_path), Path(mindspore_path)
    drawn = {}
    for side, path in (("torch", torch_path), ("mindspore", mindspore_path)):
        module = load_module(path, side)
        if not callable(getattr(module, "draw", None)):
            raise ExampleError(f"{path}: a random function's example defines draw(), which returns what it draws")
        if side == "torch":
            with torch.random.fork_rng(devices=[]):
                torch.manual_seed(0)
                value = _call(module, path, "draw")
            ok = isinstance(value, torch.Tensor)
            array, dtype = (value.numpy(), str(value.dtype).removeprefix("torch.")) if ok else (None, None)
        else:
            mindspore.set_seed(0)           # process-global, as run_mindspore's
            value = _call(module, path, "draw")
            ok = isinstance(value, mindspore.Tensor)
            array, dtype = (value.asnumpy(), str(value.dtype).lower()) if ok else (None, None)
        if not ok:
            raise ExampleError(f"{path}: draw() returned {type(value).__name__}, not a tensor of its framework")
        drawn[side] = (array, dtype)
    (t, t_dtype), (m, m_dtype) = drawn["torch"], drawn["mindspore"]
    if t.shape != m.shape or t_dtype != m_dtype:
        raise ExampleError(f"{mindspore_path}: draws {m_dtype} of shape {m.shape}; {torch_path} draws {t_dtype} of "
                           f"shape {t.shape}")
    if t.size < 2 or np.all(t == t.flat[0]):
        raise ExampleError(f"{torch_path}: draw() gave {t.size} equal value(s): too few to tell a distribution")
    _check_same_distribution(t.astype(np.float64), m.astype(np.float64), torch_path, mindspore_path)
    return (f"{t_dtype} of shape {t.shape}: {t.size} values drawn on each side, std {t.std():.2g}; the same "
            f"distribution (two-sample Kolmogorov-Smirnov, level {KS_ALPHA:g})\n")


def _call(module, path: Path, function: str, *args):
    """The example's ``function(*args)``; ExampleError naming the file when it raises."""
    try:
        return getattr(module, function)(*args)
    except Exception as exc:
        shown = f"{function}({'tensor' if args else ''})"
        raise ExampleError(f"{path}: {shown} raised {type(exc).__name__}: {exc}") from exc
