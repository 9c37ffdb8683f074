"""Tensor-by-tensor comparison of two runs, and ``compare()``: transfer weights, run both, compare.

    report = compare(torch_model, ms_model, [x], weights="torch", rtol=1e-4, atol=1e-5)
    assert report.passed, str(report)

``compare_results(expected, actual)`` compares two ``RunResult``\\ s row by row: every tensor in
either run is one row (one present on a side only is a failing row that names the missing side).
``expected`` is the reference: relative error and closeness are measured against it, as in
``torch.testing.assert_close``: an element is close when ``|actual - expected| <= atol + rtol *
|expected|``. ``compare()`` always takes the torch run as ``expected``.

Tolerances
    Per dtype, torch.testing's defaults: float32 ``rtol=1.3e-6, atol=1e-5``; float16 ``1e-3,
    1e-5``; bfloat16 ``1.6e-2, 1e-5``; float64 ``1e-7, 1e-7``; complex like their float part;
    integers and bool exact. These are same-framework tolerances. torch and MindSpore use different
    float32 kernels (summation order, fused vs. unfused ops, different GELU/softmax formulas), so
    cross-framework float32 comparisons, gradients above all, routinely need a looser ``rtol``
    (1e-5 to 1e-4 for matmul, convolution, LayerNorm, softmax on CPU). The defaults are kept as
    torch.testing's on purpose, and callers loosen them explicitly. compare() judges by the round-off
    rule instead (below), unless given rtol/atol. recompat's cross-framework tolerances, for judging by
    rtol/atol, are defined once, with the reason for each, in ``recompat.constants``: ``CROSS_RTOL,
    CROSS_ATOL`` for one layer or a small block (the usage example above) and ``DEMO_RTOL, DEMO_ATOL``
    for the whole models of ``recompat demo`` that cannot run in float64.

    Measured on CPU (torch 2.13 vs MindSpore 2.10, float32, PyNative and GRAPH alike, seeds 0-2),
    largest absolute error per tensor:

    ===================================  ========  ==========  ============  ============
    layer (input)                        output    input grad  weight grad   bias grad
    ===================================  ========  ==========  ============  ============
    Dense 256->256 (batch 32)            1.2e-6    1.3e-6      0             2.9e-6
    Conv2d 16->32 k3 pad 1 (8x16x16x16)  1.3e-6    1.4e-6      6.1e-4        1.8e-4
    LayerNorm 256 (eps 1e-5 both)        4.8e-7    2.4e-7      3.3e-6        2.9e-6
    softmax(Dense 256->64)               9.7e-8    2.2e-8      6.6e-7        1.9e-7
    ===================================  ========  ==========  ============  ============

    All pass torch.testing's float32 defaults except the convolution's parameter gradients: they
    are sums over batch x height x width (2,048 terms of magnitude up to ~300), where the two
    frameworks' summation orders differ by about 2e-6 of the largest value; measured against a
    float64 reference MindSpore's are the closer ones (1.6e-4 vs torch's 4.5e-4). The elementwise
    rule fails there on small elements next to large ones (rtol 3e-4 is still not enough at atol
    1e-5); ``rtol=1e-4, atol=1e-4`` or ``atol=1e-3`` passes. For such reductions an ``atol`` scaled
    to the tensor's magnitude is the right knob, e.g. ``atol={"param-grad": 1e-3}``.

    ``rtol`` / ``atol`` override the defaults: a number applies to every floating tensor (integer
    tensors stay exact); a mapping is looked up by tensor name, then kind (``"param-grad"``), then
    dtype name (``"float32"``), falling back to the default. Passing only one of the two keeps the
    dtype default for the other.

The round-off rule (compare()'s default verdict)
    rtol/atol cannot hold at scale: float32 round-off grows with the size and depth of the reductions behind a
    tensor, so correct twins of modest size fail torch.testing's defaults, and a looser global tolerance
    starts to hide bugs (bench/verdict_bench.py prints both rates). So compare() (``reference="auto"``, unless
    the caller gives rtol/atol) also runs a float64 copy of the torch model, and each floating tensor passes when
    MindSpore's distance from it is at most ``ROUNDOFF_FACTOR`` times torch float32's own distance, plus ``FLOOR_ULPS`` ulps of
    the tensor's largest value: elementwise (the largest distance) and norm-wise (the whole tensor, which
    catches a small error on every element). torch's distance is one sample of round-off, and a lucky one where
    terms cancel (a gradient that is 0 in exact arithmetic may come out of torch's float32 exactly 0): so the
    float64 copy also runs PROBE_RUNS (2) more times with round-off put back into its backward at random
    (compat.roundoff, the round-off probe), and round-off is the larger of the two measures (compare_training
    judges its steps by torch's measure alone). The allowance comes from the tensor
    itself, never from a tolerance chosen per model. The row keeps both distances (``ref_err_expected``, ``ref_err_actual``) and
    says when torch's float32 is the side far from the reference. A torch model that cannot be copied or run
    in float64 is judged by rtol/atol, and the report says why (``meta["reference"]["skipped"]``).

What else fails a pair (compare())
    A paired layer whose setting differs (BatchNorm momentum, LayerNorm eps, conv padding, Dropout p: the
    params marked ``compare`` in mappings/) is a failing row of kind ``setting`` (``strict=True``, the default),
    even where this run's numbers agree: momentum does nothing in evaluation mode, eps nothing on rows of large
    variance. The user's own weight conversion is judged wherever they brought one (compat.user_weights): a
    MindSpore model that already holds torch's values (``weights="auto"``, the default), a ``.ckpt`` or a torch
    file given as ``weights=``, or ``weights="as-is"``: nothing is copied, and the values the two models hold are
    first judged (rows of kind ``weight``, bit for bit, but within round-off for buffers such as BatchNorm's
    statistics, which a run moves, and for weights "auto" found alike); two freshly built models get torch's weights copied in, and the report says which. Sides in different modes are refused
    where a layer cares (BatchNorm, Dropout). A buffer the weight transfer left unpaired for a stated reason (a
    non-persistent torch buffer such as ``position_ids`` against a constant in the port) is reported, not failed.
    ``memory=True`` adds the bytes each side keeps for backward (a row of kind ``memory``): a port whose recompute
    mark was lost computes the same numbers and fails only there. Active dropout (training mode, PyNative) runs
    with torch's masks on every side (compat.dropout_replay; a row of kind ``dropout`` counts them), so a pair
    with dropout is judged like any other.

NaN and Inf
    A non-finite value never passes, unless ``equal_nan=True`` and the other side holds the same
    non-finite value at the same place (NaN with NaN, +Inf with +Inf). Error statistics are taken
    over the places where both sides are finite.

Row statistics
    ``max_abs_err`` = max |a - e|; ``mean_err`` = mean (a - e), signed (a constant offset shows here, however
    small beside the largest error); ``max_rel_err`` = max |a - e| / |e| over elements with e != 0
    (0.0 when there are none); ``cosine`` = cosine similarity of the flattened tensors in float64
    (1.0 when both are all zeros, 0.0 when exactly one is); ``within`` = the fraction of elements
    that are close. ``passed`` = shapes and dtypes equal and every element close.
"""
from __future__ import annotations

import collections
import contextlib
import json
import math
import os
from dataclasses import asdict, dataclass, field
from typing import Any, Mapping, NamedTuple, Sequence

import numpy as np

from recompat.constants import MS_MODES, either

from . import kink_replay
from .kink_replay import MINDSPORE, NOUNS, TORCH
from .localise import listed_paths
from .memory import (MEASURE, MindSporeReruns, SavedTensors, TorchReruns, checkpointing_off, judged_regions,
                     mindspore_marks, unrecomputed)
from .roundoff import FLOAT32_EPS, PROBE_ULPS, gradient_probe, probe_seeds, spread
from .runs import (KINDS, MindSporeGraphError, RunResult, _ms_numpy, _needs_grad, normalise_inputs, run_mindspore,
                   run_torch)
from .tapes import Tapes
from .user_weights import choose_weights, unused_rows

# torch.testing.assert_close defaults (torch/testing/_comparison.py, _DTYPE_PRECISIONS)
DEFAULT_TOLERANCES: dict[str, tuple[float, float]] = {
    "float16": (1e-3, 1e-5),
    "bfloat16": (1.6e-2, 1e-5),
    "float32": (1.3e-6, 1e-5),
    "float64": (1e-7, 1e-7),
    "complex32": (1e-3, 1e-5),
    "complex64": (1.3e-6, 1e-5),
    "complex128": (1e-7, 1e-7),
}
# A dtype that is neither listed above nor integer/bool (an unknown float) gets float32's.
_FALLBACK_FLOAT = DEFAULT_TOLERANCES["float32"]

Tolerance = float | Mapping[str, float] | None


def is_exact_dtype(dtype: str) -> bool:
    """Integers and bool compare exactly."""
    return dtype == "bool" or dtype.startswith(("int", "uint"))


def default_tolerance(dtype: str) -> tuple[float, float]:
    if is_exact_dtype(dtype):
        return 0.0, 0.0
    return DEFAULT_TOLERANCES.get(dtype, _FALLBACK_FLOAT)


def resolve_tolerance(name: str, kind: str, dtype: str, rtol: Tolerance = None, atol: Tolerance = None) -> tuple[float, float]:
    """(rtol, atol) for one tensor: caller's override (by name, kind, dtype) else dtype default."""
    d_rtol, d_atol = default_tolerance(dtype)
    if is_exact_dtype(dtype):
        return 0.0, 0.0

    def pick(override, default):
        if override is None:
            return default
        if isinstance(override, Mapping):
            for key in (name, kind, dtype):
                if key in override:
                    return float(override[key])
            return default
        return float(override)

    return pick(rtol, d_rtol), pick(atol, d_atol)


@dataclass
class CompareRow:
    name: str
    kind: str
    expected_shape: tuple[int, ...] | None
    actual_shape: tuple[int, ...] | None
    expected_dtype: str | None
    actual_dtype: str | None
    max_abs_err: float | None
    max_rel_err: float | None
    cosine: float | None
    within: float | None  # fraction of elements within tolerance
    rtol: float
    atol: float
    passed: bool
    message: str = ""
    # with a float64 reference run: each side's largest distance from it (None without one)
    ref_err_expected: float | None = None
    ref_err_actual: float | None = None
    # the round-off probe's largest distance from the reference (compat.roundoff; None without probes)
    ref_err_probe: float | None = None
    # mean of (actual - expected) over the finite places: a constant offset shows here, not in the largest error
    mean_err: float | None = None

    @classmethod
    def verdict(cls, name: str, kind: str, passed: bool, message: str) -> "CompareRow":
        """A row that judges no tensor (a layer setting, the memory saved, the masks and draws replayed)."""
        return cls(name=name, kind=kind, expected_shape=None, actual_shape=None, expected_dtype=None,
                   actual_dtype=None, max_abs_err=None, max_rel_err=None, cosine=None, within=None, rtol=0.0,
                   atol=0.0, passed=passed, message=message)

    def to_dict(self) -> dict[str, Any]:
        d = asdict(self)
        for k in ("expected_shape", "actual_shape"):
            if d[k] is not None:
                d[k] = list(d[k])
        for k in ("max_abs_err", "max_rel_err", "cosine", "within", "rtol", "atol", "ref_err_expected",
                  "ref_err_actual", "ref_err_probe", "mean_err"):
            d[k] = _json_float(d[k])
        return d


def _json_float(x):
    if x is None or (isinstance(x, float) and math.isfinite(x)):
        return x
    if isinstance(x, float):
        return "nan" if math.isnan(x) else ("inf" if x > 0 else "-inf")
    return x


@dataclass
class CompareReport:
    rows: list[CompareRow]
    expected: str = "expected"  # framework names of the two sides
    actual: str = "actual"
    meta: dict[str, Any] = field(default_factory=dict)

    @property
    def passed(self) -> bool:
        return bool(self.rows) and all(r.passed for r in self.rows)

    @property
    def failures(self) -> list[CompareRow]:
        return [r for r in self.rows if not r.passed]

    def __bool__(self) -> bool:  # `assert report` reads naturally
        return self.passed

    def row(self, name: str) -> CompareRow:
        for r in self.rows:
            if r.name == name:
                return r
        raise KeyError(name)

    def counts(self) -> dict[str, dict[str, int]]:
        out: dict[str, dict[str, int]] = {}
        for r in self.rows:
            c = out.setdefault(r.kind, {"passed": 0, "total": 0})
            c["total"] += 1
            c["passed"] += int(r.passed)
        return out

    def summary(self) -> str:
        counts = self.counts()
        parts = ", ".join(
            f"{k} {counts[k]['passed']}/{counts[k]['total']}" for k in (*KINDS, *sorted(set(counts) - set(KINDS))) if k in counts
        )
        n_fail = len(self.failures)
        verdict = "PASSED" if self.passed else "FAILED"
        if not self.rows:
            return f"{self.expected} vs {self.actual}: FAILED, nothing was compared"
        worst = [r for r in self.rows if r.max_abs_err is not None]
        worst_s = ""
        if worst:
            w = max(worst, key=lambda r: r.max_abs_err)
            worst_s = f"; largest abs error {w.max_abs_err:.3g} ({w.name})"
        # the largest error is taken over finite places only: without this, an all-Inf failure reads "error 0"
        nonfinite = [r.name for r in self.failures if "non-finite" in r.message]
        if nonfinite:
            worst_s += f"; NaN/Inf in {', '.join(nonfinite)}"
        return (
            f"{self.expected} vs {self.actual}: {verdict}, {len(self.rows) - n_fail}/{len(self.rows)} tensors "
            f"within tolerance ({parts}){worst_s}"
        )

    def table(self, rows: list[CompareRow] | None = None) -> str:
        rows = self.rows if rows is None else rows
        header = ("tensor", "kind", "shape", "dtype", "max abs", "mean", "max rel", "cosine", "within", "rtol/atol",
                  "")
        lines = [header]
        for r in rows:
            shape = _fmt_pair(r.expected_shape, r.actual_shape, lambda s: "(" + ",".join(map(str, s)) + ")")
            dtype = _fmt_pair(r.expected_dtype, r.actual_dtype, str)
            lines.append((
                r.name, r.kind, shape, dtype, _fmt(r.max_abs_err), _fmt(r.mean_err, ".2g"), _fmt(r.max_rel_err),
                _fmt(r.cosine, ".6f"),
                "-" if r.within is None else f"{r.within:.1%}", f"{r.rtol:g}/{r.atol:g}",
                ("ok" if r.passed else "FAIL") + (f": {r.message}" if r.message else ""),
            ))
        widths = [max(len(line[i]) for line in lines) for i in range(len(header) - 1)]
        return "\n".join(
            "  ".join(cell.ljust(w) for cell, w in zip(line[:-1], widths)) + "  " + line[-1] for line in lines
        ).rstrip()

    def __repr__(self) -> str:     # the dataclass's would print every row
        return f"<CompareReport {self.summary()}>"

    def __str__(self) -> str:
        lines = []
        failures = self.failures
        if failures:
            lines.append(self.table(failures))
        # settings the weight transfer noticed (GELU approximation, LayerNorm eps, BatchNorm
        # momentum, ...): the likeliest cause of a failing row, so they come right before the verdict
        # (a setting judged as a row, strict, is shown there: not twice)
        judged = [r.message for r in self.rows if r.kind == "setting"]
        for w in (self.meta.get("transfer") or {}).get("warnings", []):
            if not any(m.startswith(w) for m in judged):
                lines.append(f"transfer warning: {w}")
        skipped = (self.meta.get("reference") or {}).get("skipped")
        if skipped:
            lines.append(f"judged by rtol/atol, not by the float64 reference: {skipped}")
        lines.append(self.summary())
        weights = self.meta.get("weights")
        if isinstance(weights, dict):       # compare()'s choice (compat.user_weights); a bare judge_pair has none
            lines.append(f"weights judged: {weights['judged']}")
        lines += (self.meta.get("localisation") or {}).get("lines", [])
        return "\n".join(lines)

    def to_dict(self) -> dict[str, Any]:
        return {
            "passed": self.passed,
            "expected": self.expected,
            "actual": self.actual,
            "summary": self.summary(),
            "counts": self.counts(),
            "meta": self.meta,
            "rows": [r.to_dict() for r in self.rows],
        }

    def to_json(self, **kwargs) -> str:
        kwargs.setdefault("indent", 2)
        return json.dumps(self.to_dict(), allow_nan=False, default=_json_default, **kwargs)


def _json_default(obj):
    if isinstance(obj, np.generic):
        return _json_float(obj.item())
    if isinstance(obj, (set, tuple)):
        return list(obj)
    return str(obj)


def _fmt(x, spec=".3g"):
    if x is None:
        return "-"
    return format(x, spec)


def _fmt_pair(a, b, f):
    if a is None or b is None or a != b:
        return f"{'-' if a is None else f(a)} vs {'-' if b is None else f(b)}"
    return f(a)


def _compare_arrays(e: np.ndarray, a: np.ndarray, rtol: float, atol: float, equal_nan: bool):
    """(max_abs, max_rel, cosine, within, mean signed error, message) for two arrays of one shape."""
    if e.size == 0:
        return 0.0, 0.0, 1.0, 1.0, 0.0, ""
    exact = rtol == 0.0 and atol == 0.0 and not (np.issubdtype(e.dtype, np.inexact) or np.issubdtype(a.dtype, np.inexact))
    if exact:
        ok = e == a
        diff = np.abs(e.astype(np.float64) - a.astype(np.float64))
        ef, af = e.astype(np.float64).ravel(), a.astype(np.float64).ravel()
        msg = "" if ok.all() else f"{int((~ok).sum())} of {ok.size} elements differ"
        return (float(diff.max()), _max_rel(diff, np.abs(e.astype(np.float64))), _cosine(ef, af), float(ok.mean()),
                float((af - ef).mean()), msg)

    complex_ = np.iscomplexobj(e) or np.iscomplexobj(a)
    wide = np.complex128 if complex_ else np.float64
    e64, a64 = e.astype(wide), a.astype(wide)
    e_fin, a_fin = np.isfinite(e64), np.isfinite(a64)
    both = e_fin & a_fin
    with np.errstate(invalid="ignore", over="ignore"):
        diff = np.where(both, np.abs(a64 - e64), 0.0)
    ok = both & (diff <= atol + rtol * np.abs(np.where(both, e64, 0.0)))
    messages = []
    nonfinite = ~both
    if nonfinite.any():
        e_nan, a_nan = np.isnan(e64), np.isnan(a64)
        matching = (e_nan & a_nan) | (~e_fin & ~a_fin & ~e_nan & ~a_nan & (e64 == a64))
        if equal_nan:
            ok = ok | matching
            bad = nonfinite & ~matching
        else:
            bad = nonfinite
        if bad.any():
            if not equal_nan and (nonfinite == matching).all():
                messages.append(
                    f"non-finite values (NaN/Inf) at {int(nonfinite.sum())} places, the same on both "
                    "sides; they pass only with equal_nan=True"
                )
            else:
                messages.append(
                    f"non-finite values not matched at {int(bad.sum())} places "
                    f"(NaN {int(e_nan.sum())} expected vs {int(a_nan.sum())} actual, "
                    f"Inf {int(np.isinf(e64).sum())} vs {int(np.isinf(a64).sum())})"
                )
    if both.any():
        max_abs = float(diff[both].max())
        max_rel = _max_rel(diff[both], np.abs(e64[both]))
        cos = _cosine(np.where(both, e64, 0).ravel(), np.where(both, a64, 0).ravel())
        mean = float(np.real((a64[both] - e64[both]).mean()))
    else:
        max_abs, max_rel, cos, mean = 0.0, 0.0, 1.0, 0.0
    within = float(ok.mean())
    n_out = int((both & ~ok).sum())
    if n_out:
        idx = np.unravel_index(int(np.argmax(np.where(both, diff - rtol * np.abs(np.where(both, e64, 0)), -np.inf))), e.shape)
        messages.insert(0, (
            f"{n_out} of {ok.size} elements outside rtol={rtol:g}, atol={atol:g}; worst at index "
            f"{tuple(int(i) for i in idx)}: expected {e64[idx]:.9g}, actual {a64[idx]:.9g}"
        ))
    return max_abs, max_rel, cos, within, mean, "; ".join(messages)


def _max_rel(diff: np.ndarray, mag: np.ndarray) -> float:
    nz = mag > 0
    if not nz.any():
        return 0.0
    return float((diff[nz] / mag[nz]).max())


def _cosine(e: np.ndarray, a: np.ndarray) -> float:
    ne, na = float(np.linalg.norm(e)), float(np.linalg.norm(a))
    if ne == 0.0 and na == 0.0:
        return 1.0
    if ne == 0.0 or na == 0.0:
        return 0.0
    c = float(np.real(np.vdot(e, a))) / (ne * na)
    return max(-1.0, min(1.0, c))


def compare_results(
    expected: RunResult,
    actual: RunResult,
    *,
    rtol: Tolerance = None,
    atol: Tolerance = None,
    equal_nan: bool = False,
    reference: RunResult | None = None,
    floor_ulps: float | None = None,
    check_reference: bool = True,
    actual_reference: RunResult | None = None,
    probes: Sequence[RunResult] = (),
) -> CompareReport:
    """Compare every tensor of two runs; ``expected`` is the reference. See the module docstring.
    ``reference``: a float64 run of the expected side; each floating tensor it holds is judged by the round-off
    rule (``judge_by_reference``) instead of rtol/atol -- unless the expected side's outputs are not its own
    (``unlike_reference``): then rtol/atol judge, and the report says why. ``check_reference=False`` skips that
    check (compare_training checks its first step only: later, training may amplify float32 round-off far beyond
    it, which is what the rule then measures). ``floor_ulps``: the round-off rule's floor (FLOOR_ULPS).
    ``actual_reference``: the float64 run the actual side is measured against where it is not ``reference`` (the
    run along MindSpore's own branches at kinks, compat.kink_replay). ``probes``: float64 runs of the reference with
    round-off put back into the backward (compat.roundoff): round-off is the larger of their distance from the
    reference and the expected side's."""
    floor_ulps = FLOOR_ULPS if floor_ulps is None else floor_ulps
    unlike = unlike_reference(expected, reference) if reference is not None and check_reference else ""
    if unlike:
        reference = actual_reference = None
        probes = ()
    rows: list[CompareRow] = []
    names = list(expected.tensors) + [n for n in actual.tensors if n not in expected.tensors]
    for name in names:
        in_e, in_a = name in expected.tensors, name in actual.tensors
        kind = expected.kinds.get(name) if in_e else actual.kinds.get(name, "?")
        e = expected.tensors.get(name)
        a = actual.tensors.get(name)
        e_dt = expected.dtype_of(name) if in_e else None
        a_dt = actual.dtype_of(name) if in_a else None
        r_tol, a_tol = resolve_tolerance(name, kind, e_dt or a_dt, rtol, atol)
        row = CompareRow(
            name=name, kind=kind,
            expected_shape=tuple(int(s) for s in e.shape) if in_e else None,
            actual_shape=tuple(int(s) for s in a.shape) if in_a else None,
            expected_dtype=e_dt, actual_dtype=a_dt,
            max_abs_err=None, max_rel_err=None, cosine=None, within=None,
            rtol=r_tol, atol=a_tol, passed=False,
        )
        rows.append(row)
        if not in_a:
            row.message = f"{name}: missing in {actual.framework} (present in {expected.framework} only)"
            continue
        if not in_e:
            row.message = f"{name}: missing in {expected.framework} (present in {actual.framework} only)"
            continue
        if in_e and in_a and expected.kinds.get(name) != actual.kinds.get(name):
            row.message = f"{name}: kind differs: {expected.kinds.get(name)} vs {actual.kinds.get(name)}"
            continue
        problems = []
        if e.shape != a.shape:
            problems.append(f"shape mismatch for {name}: {expected.framework} {tuple(e.shape)} vs {actual.framework} {tuple(a.shape)}")
        if e_dt != a_dt:
            problems.append(f"dtype mismatch for {name}: {expected.framework} {e_dt} vs {actual.framework} {a_dt}")
        if problems:
            row.message = "; ".join(problems)
            continue
        max_abs, max_rel, cos, within, mean, msg = _compare_arrays(e, a, r_tol, a_tol, equal_nan)
        row.max_abs_err, row.max_rel_err, row.cosine, row.within, row.mean_err = max_abs, max_rel, cos, within, mean
        row.passed = within == 1.0 and not msg
        row.message = msg
        ref = reference.tensors.get(name) if reference is not None else None
        if (ref is not None and ref.shape == e.shape and not is_exact_dtype(e_dt) and not np.iscomplexobj(e)
                and "non-finite" not in msg):
            ref_a = actual_reference.tensors.get(name) if actual_reference is not None else None
            probed = spread(ref.astype(np.float64), [p.tensors[name] for p in probes if name in p.tensors])
            judge_by_reference(row, e, a, ref, expected.framework, actual.framework, floor_ulps,
                               ref_actual=ref_a if ref_a is not None and ref_a.shape == ref.shape else None,
                               probed=probed)
    return CompareReport(
        rows=rows,
        expected=expected.framework,
        actual=actual.framework,
        meta={
            "expected": expected.meta,
            "actual": actual.meta,
            "rtol": rtol if not isinstance(rtol, Mapping) else dict(rtol),
            "atol": atol if not isinstance(atol, Mapping) else dict(atol),
            "equal_nan": equal_nan,
            **({"reference": {"framework": reference.framework, "roundoff_factor": ROUNDOFF_FACTOR,
                              "floor_ulps": floor_ulps, "probes": len(probes),
                              **({"probe_ulps": PROBE_ULPS} if probes else {})}} if reference is not None else {}),
            **({"reference": {"skipped": unlike}} if unlike else {}),
        },
    )


# The round-off rule measures float32 round-off by the expected side's distance from the reference, which holds
# only while the reference computes what the expected run computed. A float32 output sits within a few ulps of its
# float64 twin's (measured: at most 4e-7 of its largest value on bench/verdict_bench.py's twins and the zoo's pairs,
# train mode, dropout replayed); one off by more than REFERENCE_UNLIKE of its largest value (64 ulps where the dtype
# is coarser) means the two runs differ: randomness in the forward that the float64 copy draws differently, or a
# model that is not the same in float64. Then the allowance would grow with that gap and hide any bug, so rtol/atol
# judge instead.
REFERENCE_UNLIKE = 1e-3


def unlike_reference(expected: RunResult, reference: RunResult) -> str:
    """Why the reference run is not the expected run in float64 ("" when it is): an output too far from it."""
    for name in expected.names("output"):
        e, ref = expected.tensors.get(name), reference.tensors.get(name)
        if e is None or ref is None or e.shape != ref.shape or not np.issubdtype(e.dtype, np.floating):
            continue
        scale = float(np.abs(ref).max(initial=0.0))
        if not scale or not np.isfinite(scale):
            continue
        off = float(np.abs(e.astype(np.float64) - ref).max()) / scale
        limit = max(REFERENCE_UNLIKE, 64 * _EPS.get(expected.dtype_of(name), _EPS["float32"]))
        if off > limit:
            return (f"{expected.framework}'s {name} is {off:.2g} of its largest value from the float64 copy's (at "
                    f"most {limit:g} for round-off): the copy does not compute what the run computed (randomness "
                    "in the forward drawn differently? a model that is not the same in float64?)")
    return ""


# The round-off rule (compare(reference="float64")). The expected side run again in float64 is the truth; the
# expected side's own float32 distance from it measures, for this very tensor, what float32 round-off amounts to
# (it grows with the size and depth of the reductions that made the tensor: no size-dependent constant needed).
# The actual side may sit ROUNDOFF_FACTOR times as far, plus FLOOR_ULPS float32 ulps of the tensor's largest value
# (for tensors the expected side happens to get exactly). Measured (bench/verdict_bench.py --seeds 5, float32 CPU,
# torch 2.13 vs MindSpore 2.10): correct twins sit at most 3x (a 12x512 residual MLP), 10x (a 4-layer transformer)
# and 14x (Conv+BatchNorm in training mode: MindSpore's BatchNorm weight gradients) as far as torch; planted bugs
# 10^3 to 10^8 times, except LayerNorm eps 1e-7 for 1e-5 at 20-25x, which sits at float32 round-off (the frontier).
ROUNDOFF_FACTOR = 32.0
FLOOR_ULPS = 4.0
# the machine epsilon of each floating dtype the floor is counted in (bfloat16 has no NumPy dtype)
_EPS = {"float16": 2.0 ** -10, "bfloat16": 2.0 ** -7, "float32": 2.0 ** -23, "float64": 2.0 ** -52}


EXPECTED_FAR = "{expected}'s float32 is the side far from the float64 reference"   # a passing row's note


def expected_is_far(row: CompareRow, expected: str) -> bool:
    """A passing row on which the expected side (torch), not the actual one, is far from the float64 reference."""
    return row.passed and row.message.startswith(EXPECTED_FAR.format(expected=expected))


def judge_by_reference(row: CompareRow, e: np.ndarray, a: np.ndarray, ref: np.ndarray, expected: str,
                       actual: str, floor_ulps: float = FLOOR_ULPS, ref_actual: np.ndarray | None = None,
                       probed: np.ndarray | None = None) -> None:
    """Judge one tensor by the round-off rule, in place: elementwise (largest distance) and norm-wise (the whole
    tensor's distance, which catches a small error spread over every element). ``floor_ulps``: the floor, in ulps
    of the tensor's magnitude (compare_training grows it with the steps). ``ref_actual``: the float64 value the
    actual side is measured against, where it took other branches at kinks (compat.kink_replay). ``probed``: the
    round-off probe's distance from the reference, elementwise (compat.roundoff): where it exceeds the expected
    side's own, it is the measure of round-off."""
    ref64 = ref.astype(np.float64)
    ref64_a = ref64 if ref_actual is None else ref_actual.astype(np.float64)
    dist_e, dist_a = np.abs(e.astype(np.float64) - ref64), np.abs(a.astype(np.float64) - ref64_a)
    eps = _EPS.get(row.expected_dtype or "", _EPS["float32"])
    row.ref_err_expected, row.ref_err_actual = float(dist_e.max(initial=0.0)), float(dist_a.max(initial=0.0))
    roundoff, roundoff_norm = row.ref_err_expected, float(np.linalg.norm(dist_e))
    measured = f"{expected}'s own float32 round-off ({roundoff:.3g})"
    measured_norm = f"{expected}'s {roundoff_norm:.3g}"
    if probed is not None:
        probed = probed * (eps / FLOAT32_EPS)        # the probe perturbs by float32 ulps; the tensor's dtype may differ
        row.ref_err_probe, probed_norm = float(probed.max(initial=0.0)), float(np.linalg.norm(probed))
        if row.ref_err_probe > roundoff:
            measured = f"the round-off probe's {row.ref_err_probe:.3g} ({expected}'s own float32: {roundoff:.3g})"
            roundoff = row.ref_err_probe
        if probed_norm > roundoff_norm:
            measured_norm = f"the round-off probe's {probed_norm:.3g} ({expected}'s: {roundoff_norm:.3g})"
            roundoff_norm = probed_norm
    floor = floor_ulps * eps * float(np.abs(ref64).max(initial=0.0))
    allowed = ROUNDOFF_FACTOR * roundoff + floor
    norm_a = float(np.linalg.norm(dist_a))
    allowed_norm = ROUNDOFF_FACTOR * roundoff_norm + floor_ulps * eps * float(np.linalg.norm(ref64))
    row.rtol, row.atol = 0.0, allowed
    row.within = float((dist_a <= allowed).mean()) if dist_a.size else 1.0
    problems = []
    if row.ref_err_actual > allowed:
        problems.append(f"{actual} is {row.ref_err_actual:.3g} from the float64 reference at worst, more than "
                        f"{ROUNDOFF_FACTOR:g}x {measured} + {floor_ulps:g} ulps")
    if norm_a > allowed_norm:
        problems.append(f"over the whole tensor {actual} is {norm_a:.3g} from the reference (norm), more than "
                        f"{ROUNDOFF_FACTOR:g}x {measured_norm} + {floor_ulps:g} ulps")
    row.passed = not problems
    if problems:
        row.message = "; ".join(problems)
    elif row.ref_err_expected > ROUNDOFF_FACTOR * row.ref_err_actual + floor:
        row.message = (EXPECTED_FAR.format(expected=expected)
                       + f" ({row.ref_err_expected:.3g} vs {actual}'s {row.ref_err_actual:.3g})")
    elif row.ref_err_actual > ROUNDOFF_FACTOR * row.ref_err_expected + floor:
        row.message = (f"passes by the round-off probe: {expected}'s own float32 ({row.ref_err_expected:.3g} from "
                       f"the reference) understates round-off here; the probe measures {row.ref_err_probe:.3g}")
    else:
        row.message = ""


def transfer_rows(transfer, strict: bool = True, deliberate: Mapping[str, str] | None = None) -> list[CompareRow]:
    """A failing row (kind "setting") for each paired layer whose setting differs (BatchNorm momentum, LayerNorm
    eps, Dropout p): with strict, a port that computes differently in another mode, or on other data, does not
    pass on the strength of this one run. Without strict, none (the settings stay warnings). ``deliberate``:
    settings that differ on purpose (name -> why), reported as passing; one of them that no longer differs fails,
    so the record stays true."""
    if not strict:
        return []
    deliberate = dict(deliberate or {})

    def row(name: str, passed: bool, message: str) -> CompareRow:
        return CompareRow.verdict(name, "setting", passed, message)

    rows, seen = [], set()
    for s in getattr(transfer, "settings", None) or ():
        seen.add(s.name)
        if s.name in deliberate:
            rows.append(row(s.name, True, f"differs on purpose: {deliberate[s.name]}"))
        else:
            rows.append(row(s.name, False, f"{s.message} (strict=False keeps it a warning)"))
    rows += [row(name, False, f"recorded as differing on purpose ({why}), but it no longer differs: update the "
                              f"record") for name, why in deliberate.items() if name not in seen]
    return rows


def weight_rows(transfer, exact: bool = True) -> list[CompareRow]:
    """compare(weights="as-is"): each paired parameter and buffer as the two models hold it before the run (kind
    "weight"): parameters equal bit for bit (``exact``), buffers (BatchNorm's statistics, which a run in training
    mode moves by each framework's own round-off) and tensors of two dtypes within the MindSpore dtype's default
    tolerance (all of them where not ``exact``): the user's own weight conversion is what is judged."""
    rows = []
    buffers = set(transfer.buffers)
    for name, t, m in transfer.values():
        t_dt, m_dt = t.dtype.name, m.dtype.name
        bitwise = exact and t_dt == m_dt and name not in buffers
        r_tol, a_tol = (0.0, 0.0) if bitwise else default_tolerance(m_dt)
        max_abs, max_rel, cos, within, mean, msg = _compare_arrays(t, m, r_tol, a_tol, equal_nan=True)
        rows.append(CompareRow(
            name=name, kind="weight", expected_shape=tuple(t.shape), actual_shape=tuple(m.shape),
            expected_dtype=t_dt, actual_dtype=m_dt, max_abs_err=max_abs, max_rel_err=max_rel, cosine=cos,
            within=within, rtol=r_tol, atol=a_tol, passed=within == 1.0 and not msg, mean_err=mean,
            message=f"the two models hold different values before the run: {msg}" if msg else ""))
    return rows


# The memory row: MindSpore may keep at most MEMORY_SLACK times what torch keeps for backward, in bytes or as a
# share of what it keeps without recompute. Measured over the zoo (PyNative, CPU; bytes saved through saved-tensor
# hooks): with recompute in the same places on both sides MindSpore keeps 0.82x to 1.006x torch's bytes, also at 4x
# and 16x the batch; a port whose mark was lost keeps 1.30x (seed_fc at 16x batch) to 12x (transformer). But the
# frameworks' ops save different tensors (MindSpore's Dense keeps its weight when the input needs no gradient; GELU
# and BatchNorm keep more): without recompute MindSpore keeps up to 1.67x torch's (the demo's convmixer), so a port
# can keep 1.36x torch's bytes with its marks all in place; as a share of what each keeps without recompute (run_pair
# measures both with checkpointing off) it keeps 0.82x torch's. Ops that save differently inside a recomputed
# region move the figures without recompute and not those with it: the bytes then say it. A lost mark raises both:
# one block of 12 unmarked keeps 1.86x torch's bytes, 1.90x its share.
MEMORY_SLACK = 1.2


def memory_row(torch_bytes: int, ms_bytes: int, torch_plain: int | None = None,
               ms_plain: int | None = None) -> CompareRow:
    """The bytes each side keeps for backward with recompute (compat.memory.SavedTensors), and without where
    known. Fails when MindSpore keeps more than MEMORY_SLACK times torch's both in bytes and, where both plain
    figures are known, as a share of what it keeps without recompute. A recompute mark lost in the port keeps what
    no recompute keeps."""
    kept = f"torch keeps {torch_bytes:,} bytes for backward, MindSpore {ms_bytes:,}"
    ratio = ms_bytes / torch_bytes if torch_bytes else (1.0 if not ms_bytes else math.inf)
    if torch_plain and ms_plain:
        t_kept, m_kept = torch_bytes / torch_plain, ms_bytes / ms_plain
        share = m_kept / t_kept if t_kept else (1.0 if not m_kept else math.inf)
        passed = min(ratio, share) <= MEMORY_SLACK
        message = (f"{kept} ({torch_plain:,} and {ms_plain:,} without recompute): recompute saves "
                   f"{1 - t_kept:.0%} on torch, {1 - m_kept:.0%} on MindSpore; MindSpore keeps {ratio:.2f}x torch's "
                   f"bytes, {share:.2f}x its share (at most {MEMORY_SLACK:g}x by either)")
    else:
        passed = ratio <= MEMORY_SLACK
        message = f"{kept} ({ratio:.2f}x; at most {MEMORY_SLACK:g}x)"
    if not passed:
        message += (": MindSpore saves less memory than torch — a recompute mark lost in the port (or on a cell "
                    "that is never called) keeps what no recompute keeps; mark every region torch checkpoints")
    return CompareRow.verdict("bytes kept for backward", "memory", passed, message)


class Regions(NamedTuple):
    """The regions torch recomputed, those of them MindSpore recomputes nothing at, inside or around, and how many
    had no MindSpore cell to pair (not judged); torch paths (run_pair)."""
    recomputed: list[str]
    lost: list[str]
    unjudged: int = 0


def regions_row(regions: Regions) -> CompareRow:
    """Every region torch recomputes has MindSpore recompute something at, inside or around its paired cells: a
    lost mark fails here by name, however little memory the region holds beside the rest of the model. A region
    with no MindSpore cell to pair is counted, not judged."""
    lost, unjudged, n = regions.lost, regions.unjudged, len(regions.recomputed)
    message = f"torch recomputes {n} region{'s' if n != 1 else ''} in backward"
    if unjudged:
        message += (f" ({unjudged} with no MindSpore cell to pair, not judged: a module the port calls as a "
                    "function)")
    if unjudged == n:
        message += "; none could be judged"
    elif lost:
        message += (f"; MindSpore recomputes nothing at, inside or around {len(lost)} of them ({listed_paths(lost)}): "
                    "a recompute "
                    "mark lost there -- mark those cells (Cell.recompute()) or call them through mindspore.recompute")
    else:
        message += f"; MindSpore recomputes at, inside or around each {'judged one' if unjudged else 'of them'}"
    return CompareRow.verdict("regions recomputed", "memory", not lost, message)


def dropout_row(tape) -> list[CompareRow]:
    """compare(dropout="replay"): a row (kind "dropout") saying how many of torch's masks MindSpore's forward took;
    fewer than torch drew fails (a dropout the port lost). None when torch drew no mask."""
    if tape is None or not (tape.masks or tape.unreplayed):
        return []
    drawn, taken = len(tape.masks), tape.taken.get("MindSpore", 0)
    ps = ", ".join(f"{p:g}" for p in sorted(set(tape.p)))
    redrawn, torch_redrawn = tape.redrawn.get("MindSpore", 0), tape.redrawn.get("torch", 0)
    passed = taken == drawn and not redrawn and not tape.unreplayed
    message = (f"torch drew {drawn} dropout mask{'s' if drawn != 1 else ''} (p {ps}); MindSpore's forward took "
               f"{taken}, the same masks in the same order")
    if taken != drawn:
        message += ": a dropout the port lost (or one it does not call through ops.Dropout)"
    if redrawn:
        message += (f"; MindSpore's recomputation drew {redrawn} new mask{'s' if redrawn != 1 else ''} where torch "
                    "recomputes with the forward's: its own recompute does not keep them (docs/behaviours.md); "
                    "recompat.compat.checkpoint_on_mindspore.checkpoint does")
    if torch_redrawn:
        message += (f"; torch's recomputation drew {torch_redrawn} new mask{'s' if torch_redrawn != 1 else ''} "
                    "(checkpoint with preserve_rng_state=False), which a port that keeps the forward's does not")
    if tape.unreplayed:
        message += (f"; not replayed: {', '.join(sorted(set(tape.unreplayed)))} (alpha dropout, or channel "
                    "dropout on an input without a batch axis: each framework draws its own masks, so the values "
                    "differ — compare this pair in evaluation mode)")
    return [CompareRow.verdict("dropout masks", "dropout", passed, message)]


def draw_row(tape) -> list[CompareRow]:
    """compare(dropout="replay"): a row (kind "draws") saying how many of torch's random draws (torch.rand, ...)
    MindSpore's forward took; fewer than torch drew fails (a draw the port lost). None when torch drew nothing."""
    if tape is None or not tape.values:
        return []
    drawn, taken = len(tape.values), tape.taken.get("MindSpore", 0)
    apis = ", ".join(f"{api} x{n}" for api, n in sorted(collections.Counter(tape.apis).items()))
    redrawn = tape.redrawn.get("MindSpore", 0)
    passed = taken == drawn and not redrawn
    message = (f"torch drew {drawn} time{'s' if drawn != 1 else ''} ({apis}); MindSpore's forward took {taken}, the "
               "same values in the same order")
    if taken != drawn:
        message += ": a draw the port lost (or one it makes otherwise than through the mapped functions)"
    if redrawn:
        message += (f"; MindSpore's recomputation drew {redrawn} new value{'s' if redrawn != 1 else ''} where "
                    "torch recomputes with the forward's (it restores its generator): the gradients are of another "
                    "sample")
    return [CompareRow.verdict("random draws", "draws", passed, message)]


def kink_row(branches) -> list[CompareRow]:
    """The decisions at kinks (a ReLU input's side of 0, a ReLU6's segment, a max-pool's pick) the two float32
    runs took otherwise than float64 (compat.kink_replay): a row of kind "kink" where any did, or where MindSpore's
    could not be replayed. It fails where MindSpore decided otherwise beyond round-off (its input there differs, or the op)."""
    if branches is None or not branches.calls():
        return []
    differ = {side: branches.differ.get(side, 0) for side in (TORCH, MINDSPORE)}
    unreplayed = list(dict.fromkeys(why for why in (*branches.unreplayed.values(), *branches.unreadable.values())
                                    if why))
    if not any(differ.values()) and not unreplayed:
        return []
    parts = [branches.calls()]
    for side in (TORCH, MINDSPORE):
        took = [f"{n} {NOUNS[kind][n != 1]}" for kind, n in branches.forgiven.get(side, {}).items() if n]
        if took:
            parts.append(f"{side}'s float32 took the other branch at {' and '.join(took)} within round-off (at most "
                         f"{branches.largest[side] / _EPS['float32']:.3g} float32 ulps of its call's largest input "
                         f"from the kink): {side} is judged against a float64 run along its own branches")
    if branches.beyond:
        parts.append("MindSpore decides otherwise than float64 beyond round-off at "
                     + "; ".join(branches.beyond[:3]) + (" ..." if len(branches.beyond) > 3 else "")
                     + ": its input there differs from torch's, or the op does (a ReLU's threshold, a pooling "
                       "window)")
    parts += unreplayed
    return [CompareRow.verdict(f"kinks ({', '.join(kink_replay.KINDS)})", "kink", not branches.beyond,
                               "; ".join(parts))]


def _unpaired_by_design(report: CompareReport, transfer) -> None:
    """A buffer on one side only that the weight transfer left unpaired for a stated reason (a non-persistent torch
    buffer such as ``position_ids`` or ``inv_freq`` against a constant in the port; a tensor the layer pair's
    mapping entry has no counterpart for) is reported, not failed: there is nothing on the other side to hold it
    against."""
    skipped = {s.name: s for s in getattr(transfer, "skipped", None) or ()}
    to_torch = {m: t for t, m in getattr(transfer, "name_map", {}).items()}
    for row in report.rows:
        if row.kind != "buffer" or (row.expected_shape is None) == (row.actual_shape is None):
            continue
        why = skipped.get(row.name) or skipped.get(to_torch.get(row.name, ""))
        if why is not None:
            side = report.expected if row.expected_shape is not None else report.actual
            row.passed = True
            row.message = f"not compared: {side} only, unpaired by the weight transfer: {why.reason}"


def _to_torch_layout(actual: RunResult, transfer) -> None:
    """A pair whose layer entry gives MindSpore's tensor another layout (Conv1d's weight has an axis of 1 inserted):
    its gradient and buffer are compared in torch's shape, as transfer_weights copied it."""
    for pair in getattr(transfer, "pairs", None) or ():
        shape = tuple(pair.shape)
        for name in (f"{pair.torch_name}.grad", pair.torch_name):
            a = actual.tensors.get(name)
            if a is not None and tuple(a.shape) != shape and a.size == int(np.prod(shape, dtype=np.int64)):
                actual.tensors[name] = a.reshape(shape)


def _same_mode(torch_model, ms_model) -> None:
    """Both sides in training mode or both in evaluation mode where either holds a layer that computes differently
    in the two (frameworks.yaml: mode_dependent_layers: BatchNorm, Dropout): else a verdict either way says
    nothing about the port. (An nn.Module starts in training mode, a Cell in evaluation mode.)"""
    torch_training, ms_training = bool(torch_model.training), bool(getattr(ms_model, "training", False))
    if torch_training == ms_training:
        return
    layer = (_mode_dependent("torch", torch_model.modules())
             or _mode_dependent("mindspore", (c for _, c in ms_model.cells_and_names())))
    if layer is not None:
        def mode(training):
            return "training" if training else "evaluation"
        raise ValueError(f"the torch model ({type(torch_model).__name__}) is in {mode(torch_training)} mode and the "
                         f"MindSpore one ({type(ms_model).__name__}) in {mode(ms_training)} mode, and {layer} "
                         f"computes differently in the two — put both in the same mode: model.train() / "
                         f"model.eval() and cell.set_train(True) / cell.set_train(False)")


def _mode_dependent(framework: str, layers) -> str | None:
    """The class name of the first layer among `layers` that computes differently in training mode, if any."""
    from recompat import mappings

    names = mappings.default().frameworks[framework].mode_dependent_layers
    for layer in layers:
        if any(f"{c.__module__}.{c.__qualname__}" in names for c in type(layer).__mro__):
            return type(layer).__name__
    return None


def _as_float64(inputs):
    """The inputs with every floating array as float64 (others as they are), in the same structure."""
    def cast(v):
        return v.astype(np.float64) if isinstance(v, np.ndarray) and np.issubdtype(v.dtype, np.floating) else v
    if isinstance(inputs, Mapping):
        return {k: cast(v) for k, v in inputs.items()}
    return cast(inputs) if isinstance(inputs, np.ndarray) else [cast(v) for v in inputs]


class ModelRunError(RuntimeError):
    """compare(): one side's model raised while it ran (its forward or backward); the message names the side and
    the model, the model's own exception is chained (``__cause__``)."""

    def __init__(self, message: str, side: str):
        super().__init__(message)
        self.side = side


class _side:
    """Re-raise what a run raises as a ModelRunError naming the side: a bare ValueError from deep inside one of two
    frameworks does not say which model to look at. MindSporeGraphError already says it, and goes through."""

    def __init__(self, side: str, model, note: str):
        self.side, self.model, self.note = side, model, note

    def __enter__(self):
        return self

    def __exit__(self, kind, err, tb):
        if err is None or not isinstance(err, Exception) or isinstance(err, MindSporeGraphError):
            return False
        raise ModelRunError(f"the {self.side} model ({type(self.model).__name__}) raised {type(err).__name__}: "
                            f"{err} ({self.note}; its traceback is chained above)", self.side) from err


@dataclass
class PairRuns:
    """What compare() runs: the torch run (expected), the MindSpore run in torch's names and layout (actual), the
    float64 reference run of the torch model (None without one), and the weight transfer. ``no_reference`` says why
    there is no reference run where one was wanted ("auto" and the torch model could not run in float64)."""
    expected: RunResult
    actual: RunResult
    reference: RunResult | None
    transfer: Any
    no_reference: str = ""
    weights: list[CompareRow] = field(default_factory=list)    # weights="as-is": the values before the run
    kept: dict[str, int] | None = None    # memory=True: bytes kept for backward, by framework
    tapes: Tapes = field(default_factory=Tapes)   # dropout masks replayed, decisions at kinks (PyNative)
    actual_reference: RunResult | None = None     # the float64 run along MindSpore's branches, where they differ
    probes: list[RunResult] = field(default_factory=list)   # the reference again, round-off in its backward
    no_probe: str = ""            # why a probe did not run, where one did not
    memory_reason: str = ""       # why the bytes kept for backward were judged, or not (memory_check)
    kept_without: dict[str, int] | None = None    # the same with checkpointing and recompute off, where measured
    regions: Regions | None = None    # what each side recomputed, region by region, where memory is judged


REFERENCES = ("auto", "float64", None)
DROPOUT = ("replay", "own")    # torch's dropout masks replayed on the other runs, or each run draws its own
WEIGHTS = ("torch", "mindspore", "as-is")    # the side whose weights both run with; as-is: each its own


def wants_reference(reference: str | None, rtol: Tolerance = None, atol: Tolerance = None) -> str | None:
    """What compare()'s ``reference`` comes to: "auto" is the float64 reference unless the caller chose rtol/atol
    (then those judge, as asked); a value outside REFERENCES is refused."""
    if reference not in REFERENCES:
        raise ValueError(f"reference must be {either(map(repr, REFERENCES))}, not {reference!r}")
    if reference == "auto" and (rtol is not None or atol is not None):
        return None
    return reference


def float64_twin(torch_model, reference: str | None = "auto"):
    """(a float64 copy of the torch model, "") or (None, why not): take it before a step moves the model's buffers
    (BatchNorm statistics). reference None: (None, ""); "float64": a copy that fails raises."""
    import copy

    import torch

    if reference is None:
        return None, ""
    try:
        twin = copy.deepcopy(torch_model).double()
        for module in twin.modules():   # .double() converts parameters and buffers; a tensor kept as a plain
            for name, value in list(vars(module).items()):     # attribute (MONAI's AffineHead.grid) too
                if isinstance(value, torch.Tensor) and value.is_floating_point():
                    setattr(module, name, value.double())
        return twin, ""
    except Exception as err:
        if reference == "float64":
            raise
        return None, f"the torch model could not be copied into float64 ({type(err).__name__}: {err})"


def run_reference(twin, inputs, *, reference: str | None = "auto", seed: int = 0, device: str = "cpu",
                  grad_inputs=None, forward_context=None, backward_context=None) -> tuple[RunResult | None, str]:
    """(the float64 twin's run on the inputs cast to float64, "") -- the reference of the round-off rule -- or
    (None, why not). reference "float64": a run that fails raises (ModelRunError)."""
    if twin is None:
        return None, ""
    try:
        with _side("torch (float64 reference)", twin, "it ran in float32; a model that cannot run in float64 is "
                   "judged by rtol/atol: pass reference=None"):
            return run_torch(twin, _as_float64(inputs), seed=seed, device=device, grad_inputs=grad_inputs,
                             forward_context=forward_context, backward_context=backward_context), ""
    except ModelRunError as err:
        if reference == "float64":
            raise
        return None, f"the torch model did not run in float64 ({type(err.__cause__).__name__}: {err.__cause__})"


def run_pair(torch_model, ms_model, inputs, *, weights: str = "torch", ms_mode: str = "pynative", device: str = "cpu",
             seed: int = 0, grad_inputs=None, reference: str | None = "auto", memory: bool | str = "auto",
             dropout: str = "replay", kinks: bool = True, watch=None, exact_weights: bool = True) -> PairRuns:
    """Transfer the weights (``weights`` names the source side) and run both models once, forward and backward;
    with ``reference`` "float64" also a float64 copy of the torch model ("auto": the same, or none, saying why in
    ``no_reference``, when the torch model cannot be copied or run in float64). See compare(). ``watch``: a
    compat.localise.Watch recording every module call of every run (labels "torch", "mindspore", "torch:reference",
    "torch:probe<i>", "MindSpore:reference"). ``exact_weights``: weights="as-is" judges the parameters held bit for
    bit (False: within round-off, as compare(weights="auto") found them alike)."""
    from .weights import transfer_weights

    reference = wants_reference(reference)
    if weights not in WEIGHTS:
        raise ValueError(f"weights must be {either(map(repr, WEIGHTS))}, not {weights!r}")
    if ms_mode not in MS_MODES:
        raise ValueError(f"ms_mode must be {' or '.join(map(repr, MS_MODES))}, not {ms_mode!r}")
    if dropout not in DROPOUT:
        raise ValueError(f"dropout must be {either(map(repr, DROPOUT))}, not {dropout!r}")
    if memory not in MEMORY:
        raise ValueError(f"memory must be {either(map(repr, MEMORY))}, not {memory!r}")
    if memory is True and ms_mode != "pynative":
        raise ValueError("memory=True counts the bytes kept for backward through saved-tensor hooks, which MindSpore "
                         "has in PyNative mode only: pass ms_mode='pynative'")
    _same_mode(torch_model, ms_model)
    # "auto": torch's side is counted, and MindSpore's too where either model recomputes (memory_check)
    counting = memory is True or (memory == "auto" and ms_mode == "pynative")
    counters = {f: SavedTensors(f, watch.owner(f) if watch else None) for f in ("torch", "mindspore")} \
        if counting else {}
    held = []
    if weights == "as-is":
        transfer = transfer_weights(torch_model, ms_model, copy=False)
        held = weight_rows(transfer, exact_weights)         # before a step moves the buffers
    elif weights == "torch":
        transfer = transfer_weights(torch_model, ms_model)
    else:
        transfer = transfer_weights(ms_model, torch_model)
    name_map = dict(transfer.name_map)
    _needs_grad(*normalise_inputs(inputs), grad_inputs)   # the caller's mistake, not a model's: raised as it is
    twin64, no_copy = float64_twin(torch_model, reference)
    # GRAPH mode compiles MindSpore's dropout, ReLU and max-pool into the graph: there nothing is recorded or replayed
    tapes = Tapes.for_pair(ms_mode, dropout, kinks)

    reruns = TorchReruns(torch_model) if memory is not False else contextlib.nullcontext()
    with _side("torch", torch_model, "the MindSpore side was not run"), tapes.torch() as phase, \
            _watched(watch, "torch", torch_model), reruns:
        expected = run_torch(torch_model, inputs, seed=seed, device=device, grad_inputs=grad_inputs,
                             forward_context=forward_context(counters.get("torch"), phase, watch, reruns))
    why = memory_check(memory, ms_mode, reruns, ms_model)
    if not why.checked:
        counters.pop("mindspore", None)
    ms_reruns = MindSporeReruns(ms_model) if why.checked and watch is None else contextlib.nullcontext()
    with _side("MindSpore", ms_model, "the torch side ran"), tapes.mindspore() as phase, \
            _watched(watch, "mindspore", ms_model, name_map), ms_reruns:
        actual = run_mindspore(ms_model, inputs, seed=seed, mode=ms_mode, name_map=name_map, grad_inputs=grad_inputs,
                               forward_context=forward_context(counters.get("mindspore"), phase, watch, ms_reruns))
    refs = run_references(twin64, inputs, tapes, reference=reference, seed=seed, device=device,
                          grad_inputs=grad_inputs, watch=watch)
    _to_torch_layout(actual, transfer)
    kept = {f: c.bytes for f, c in counters.items()} if why.checked else None
    plain, reason, regions = None, why.reason, None
    if watch is not None and why.checked:
        watch.kept = {f: dict(c.by_owner) for f, c in counters.items()}
    elif why.checked:     # a watched rerun localises by module: the whole model's saving is judged already
        plain, not_measured = kept_without_recompute(torch_model, ms_model, inputs, seed=seed, device=device,
                                                     grad_inputs=grad_inputs)
        reason += f"; without recompute not measured: {not_measured}" if not_measured else ""
        regions = _regions(torch_model, ms_model, name_map, reruns.modules, ms_reruns.cells)
    return PairRuns(expected, actual, refs.reference, transfer, no_copy or refs.no_reference, held, kept, tapes,
                    refs.actual_reference, refs.probes, refs.no_probe, reason, plain, regions)


def _regions(torch_model, ms_model, name_map, torch_regions, ms_reran) -> Regions:
    """What MindSpore recomputes of the regions torch does, in torch paths: cells paired as localisation pairs them
    (by path, else by the weights' names); a mark counts as well as a rerun (a one-operator cell's recomputation
    calls no cell)."""
    from .localise import pair_paths

    torch_paths = [path for path, _ in torch_model.named_modules()]
    paths = pair_paths(torch_paths, dict(ms_model.cells_and_names()), name_map)
    ms_recomputed = {paths.get(p, p) for p in [*ms_reran, *(m for m in mindspore_marks(ms_model) if ":" not in m)]}
    paired = set(paths.values())
    unjudged = len(torch_regions) - len(judged_regions(torch_regions, paired))
    return Regions(list(torch_regions), unrecomputed(torch_regions, ms_recomputed, paired), unjudged)


def kept_without_recompute(torch_model, ms_model, inputs, *, seed: int = 0, device: str = "cpu",
                           grad_inputs=None) -> tuple[dict[str, int] | None, str]:
    """The bytes each model keeps for backward with its checkpointing and recompute off (memory.checkpointing_off;
    PyNative), both models put back as they were: what recompute saves on each side, which the memory row
    weighs. (None, why) where a model does not run so."""
    restore = _held_state(torch_model, ms_model)
    counters = {f: SavedTensors(f) for f in ("torch", "mindspore")}
    try:
        with checkpointing_off(ms_model):
            run_torch(torch_model, inputs, seed=seed, device=device, grad_inputs=grad_inputs,
                      forward_context=lambda: counters["torch"])
            run_mindspore(ms_model, inputs, seed=seed, mode="pynative", grad_inputs=grad_inputs,
                          forward_context=lambda: counters["mindspore"])
    except Exception as err:      # the bytes rule judges without it, and the row says why
        return None, f"{type(err).__name__}: {err}"
    finally:
        restore()
    return {f: c.bytes for f, c in counters.items()}, ""


MEMORY = ("auto", True, False)


class MemoryCheck(NamedTuple):
    checked: bool
    reason: str      # why the bytes kept for backward are judged, or why not


def memory_check(memory, ms_mode: str, reruns, ms_model) -> MemoryCheck:
    """Whether run_pair judges the bytes kept for backward: memory=True always, False never, "auto" where either
    model recomputes -- torch's modules that ran again in its backward (TorchReruns), MindSpore's marks
    (mindspore_marks) -- in PyNative mode, where MindSpore has saved-tensor hooks."""
    if memory is True:
        return MemoryCheck(True, "asked (memory=True)")
    if memory is False:
        return MemoryCheck(False, "not asked (memory=False)")
    if ms_mode != "pynative":
        return MemoryCheck(False, "not judged in GRAPH mode, which has no saved-tensor hooks to count with")
    marks = mindspore_marks(ms_model)
    sides = [f"torch reruns {_count(len(reruns.modules), 'module')} in backward ({listed_paths(reruns.modules)})"
             if reruns.modules else "", f"MindSpore marks {_count(len(marks), 'cell or operator', 'cells or operators')}"
             f" for recompute ({listed_paths(marks)})" if marks else ""]
    sides = [s for s in sides if s]
    if not sides:
        return MemoryCheck(False, "neither model checkpoints or recomputes: there is no saving to prove")
    return MemoryCheck(True, " and ".join(sides))


def _count(n: int, one: str, many: str | None = None) -> str:
    return f"{n} {one if n == 1 else many or one + 's'}"


class References(NamedTuple):
    """The float64 runs of the torch model's copy (run_references)."""
    reference: RunResult | None      # along torch's branches at kinks
    actual_reference: RunResult | None   # along MindSpore's, where they differ within round-off (else None)
    no_reference: str                # why there is no reference run ("" when there is, or none was wanted)
    probes: list[RunResult]          # the reference with round-off put back into its backward (compat.roundoff)
    no_probe: str = ""               # why a probe did not run, where one did not


def run_references(twin, inputs, tapes: Tapes, *, reference: str | None = "auto", seed: int = 0,
                   device: str = "cpu", grad_inputs=None, watch=None) -> References:
    """The float64 runs, after both float32 runs recorded into ``tapes``: the reference along torch's branches at
    kinks, its round-off probes, and the run along MindSpore's branches where they differ within round-off."""
    # a run changes the copy's buffers only (BatchNorm statistics; run_torch clears the gradients): each run after
    # the first starts from the buffers the first did
    buffers = {name: b.detach().clone() for name, b in twin.named_buffers()} if twin is not None else {}

    def run(side: str, probe=None, label: str = "") -> tuple[RunResult | None, str]:
        import torch

        with torch.no_grad():
            for name, b in twin.named_buffers():
                b.copy_(buffers[name])
        with tapes.reference(side) as phase, _watched(watch, f"{side}:{label or 'reference'}", twin):
            # a probe that fails leaves the rule to torch's own measure: never fatal, the reason kept
            return run_reference(twin, inputs, reference="auto" if probe is not None else reference, seed=seed,
                                 device=device, grad_inputs=grad_inputs,
                                 forward_context=forward_context(None, phase, watch), backward_context=probe)

    if twin is None:
        return References(None, None, "", [])
    ref, no_run = run(TORCH)
    if ref is None:
        return References(None, None, no_run, [])
    # each probe replays torch's branches as the reference did; done before the run along MindSpore's, whose
    # replay the tapes keep last (the kink row reads it)
    probes, no_probe = [], ""
    if any(k in ("input-grad", "param-grad") for k in ref.kinds.values()):      # nothing to probe without a backward
        for i, s in enumerate(probe_seeds(seed)):
            probe, why = run(TORCH, gradient_probe(s), f"probe{i}")
            probes += [probe] if probe is not None else []
            no_probe = no_probe or why
    ref_actual = run(MINDSPORE)[0] if tapes.needs_mindspore_reference() else None
    return References(ref, ref_actual, "", probes, no_probe)


def forward_context(counter=None, phase=None, *watchers):
    """What runs.py enters around a forward (its forward_context): a memory counter (SavedTensors), the phase of
    the tapes (compat.tapes), and what tells a forward call from a recomputation (a compat.localise.Watch, a
    TorchReruns: their ``forward()``); None when none."""
    watchers = [w for w in watchers if hasattr(w, "forward")]
    if counter is None and phase is None and not watchers:
        return None

    @contextlib.contextmanager
    def entered():
        with contextlib.ExitStack() as stack:
            if counter is not None:
                stack.enter_context(counter)
            if phase is not None:
                stack.enter_context(phase.during_forward())
            for w in watchers:
                stack.enter_context(w.forward())
            yield
    return entered


def _watched(watch, label: str, model, name_map=None):
    """The watch's hooks on ``model`` for one run (compat.localise.Watch); nothing without a watch."""
    if watch is None:
        return contextlib.nullcontext()
    if label == "mindspore":
        return watch.mindspore(model, label, name_map or {})
    return watch.torch(model, label)


def compare(
    torch_model,
    ms_model,
    inputs,
    *,
    weights: str | os.PathLike = "auto",
    ms_mode: str = "pynative",
    rtol: Tolerance = None,
    atol: Tolerance = None,
    device: str = "cpu",
    seed: int = 0,
    equal_nan: bool = False,
    grad_inputs=None,
    reference: str | None = "auto",
    strict: bool = True,
    memory: bool | str = "auto",
    dropout: str = "replay",
    kinks: bool = True,
    localise: bool | str = "auto",
) -> CompareReport:
    """Transfer weights (``weights`` says which), run both, compare torch (expected)
    with MindSpore (actual). A weight-transfer error (``WeightTransferError``) propagates: a pair
    whose weights cannot be matched is a broken pair, not a numerical difference. A model that raises is a
    ``ModelRunError`` naming the side (GRAPH mode that cannot compile: ``MindSporeGraphError``).

    The verdict (``reference``): "auto", the default, also runs a float64 copy of the torch model and judges each
    floating tensor by how far each side is from it (the round-off rule, ``judge_by_reference``): float32
    round-off never fails a correct twin, whatever its size, and the report says which side is off. Given
    ``rtol``/``atol``, "auto" judges by those instead; a torch model that cannot be copied or run in float64 is
    judged by rtol/atol too, and the report says why. "float64" insists on the reference (the copy's error is
    raised); None judges by rtol/atol only.

    ``weights`` (compat.user_weights): "auto" (the default) judges the MindSpore model's own weights where it
    already holds torch's values for most of torch's parameters (the user converted them: nothing is copied, and
    the values both models hold are first judged, rows of kind "weight"), and copies torch's in for two freshly
    built models; the path of a ``.ckpt`` (or of a torch file, converted as ``recompat weights`` does) loads it into
    the MindSpore model and judges it so; "as-is" judges what each holds; "torch" copies torch's weights into the
    MindSpore model, "mindspore" the other way. ``meta["weights"]["judged"]`` (printed) says which. ``strict`` (the default): a paired layer whose setting differs
    (BatchNorm momentum, LayerNorm eps, Dropout p) is a failing row of kind "setting", even where this run's
    numbers agree (momentum in evaluation mode); strict=False leaves it a transfer warning.

    ``memory``: "auto" (the default) counts the bytes each side keeps for backward wherever either model
    recomputes (a torch module runs again in torch's backward; a MindSpore cell or operator is marked) and adds a
    row of kind "memory" that fails when MindSpore keeps more than MEMORY_SLACK times torch's: a port whose
    recompute mark was lost computes the same numbers and saves nothing. The row says why it was judged; a pair
    where neither side recomputes has none (``meta["memory"]["skipped"]`` says so), nor has GRAPH mode, which has
    no saved-tensor hooks. True judges it always (PyNative only), False never.

    ``dropout``: "replay" (the default; PyNative) hands the masks torch's dropout draws to MindSpore's and to the
    float64 reference (compat.dropout_replay), and so the values its forward draws itself (torch.rand, randn_like:
    compat.draw_replay), so a pair with active dropout or a sampling forward is judged like any other; rows of
    kinds "dropout" and "draws" count them; "own": each framework draws its own (they differ).

    ``kinks`` (the default; PyNative): where one side's float32 decides a kink otherwise than float64 within
    round-off (a ReLU input near 0, a max-pool near-tie), that side is judged against a float64 run along its own
    branches (compat.kink_replay; a row of kind "kink" says where, and fails where MindSpore decides otherwise far
    from the kink); False: one float64 run, which such a flip fails.

    ``localise``: "auto" (the default) reruns a failing pair from the same state with every module call watched
    and names the first module whose output differs, and going back the first whose input gradient does
    (compat.localise; ``meta["localisation"]``, printed with the report); True does it for a passing pair too,
    False never. A passing pair costs what it did without it."""
    if localise not in LOCALISE:
        raise ValueError(f"localise must be {either(map(repr, LOCALISE))}, not {localise!r}")
    reference = wants_reference(reference, rtol, atol)
    choice = choose_weights(torch_model, ms_model, weights)     # a file is loaded before the state is held
    held = _held_state(torch_model, ms_model) if localise else None
    pair = {"weights": choice.run_with, "exact_weights": choice.exact, "device": device, "seed": seed, "grad_inputs": grad_inputs, "reference": reference,
            "dropout": dropout, "kinks": kinks}
    runs = run_pair(torch_model, ms_model, inputs, ms_mode=ms_mode, memory=memory, **pair)
    report = judge_pair(runs, rtol=rtol, atol=atol, equal_nan=equal_nan, strict=strict)
    report.rows[:0] = unused_rows(choice)
    if localise is True or (localise == "auto" and not report.passed):
        as_run = _held_state(torch_model, ms_model)     # the models are left as the run left them, not the rerun
        held()
        try:
            memory_failed = any(r.kind == "memory" and not r.passed for r in report.rows)
            found = localise_pair(torch_model, ms_model, inputs, ms_mode=ms_mode, rtol=rtol, atol=atol,
                                  equal_nan=equal_nan, memory=memory_failed, **pair).as_json()
        except Exception as err:     # the verdict stands without it: say why, never raise over the report
            why = f"localisation did not run: the watched rerun raised {type(err).__name__}: {err}"
            found = {"skipped": why, "lines": [why]}
        finally:
            as_run()
        report.meta["localisation"] = found
    report.meta.update({
        "weights": choice.as_json(),
        "strict": strict,
        "ms_mode": ms_mode,
        "device": device,
        "seed": seed,
    })
    return report


LOCALISE = ("auto", True, False)


def localise_pair(torch_model, ms_model, inputs, *, ms_mode: str = "pynative", rtol: Tolerance = None,
                  atol: Tolerance = None, equal_nan: bool = False, memory: bool = False, **run_kwargs):
    """Run the pair again with every module call watched (compat.localise) and say where it first parts: a
    Localisation. Hooks need PyNative: a GRAPH-mode pair is localised in PyNative, and the note says so.
    ``memory``: also count the bytes kept for backward by module, and say where MindSpore keeps the most beyond
    torch (what a failing memory row asks)."""
    from .localise import Watch, locate, paired_runs

    watch = Watch()
    runs = run_pair(torch_model, ms_model, inputs, ms_mode="pynative", watch=watch, memory=memory, **run_kwargs)
    judged = compare_results(**paired_runs(watch, runs.reference is not None), rtol=rtol, atol=atol,
                             equal_nan=equal_nan)
    note = ("localised in PyNative mode: MindSpore's hooks do not run in GRAPH mode, where the pair failed"
            if ms_mode != "pynative" else "")
    return locate(watch, judged, note, memory=memory)


def _held_state(torch_model, ms_model):
    """A function putting both models' parameters and buffers back as they are now (a run moves BatchNorm's
    statistics; weights="as-is" judges what each model holds)."""
    import torch
    from mindspore import Tensor

    torch_held = {k: v.detach().clone() for k, v in torch_model.state_dict(keep_vars=True).items()}
    ms_held = [(p, _ms_numpy(p), p.dtype) for p in [*ms_model.get_parameters(),
                                                         *(b for _n, b in ms_model.named_buffers())]]

    def restore():
        with torch.no_grad():
            for k, v in torch_model.state_dict(keep_vars=True).items():
                v.copy_(torch_held[k])
        for p, arr, dtype in ms_held:
            if hasattr(p, "set_data"):
                p.set_data(Tensor(arr).astype(dtype))
            else:
                p.assign_value(Tensor(arr).astype(dtype))
    return restore


def judge_pair(runs: PairRuns, *, rtol: Tolerance = None, atol: Tolerance = None, equal_nan: bool = False,
               strict: bool = True, kept_without: Mapping[str, int] | None = None,
               deliberate: Mapping[str, str] | None = None) -> CompareReport:
    """The report on what run_pair ran: every tensor (by the round-off rule where there is a reference run), the
    settings (strict), the weights as held (weights="as-is"), the dropout masks and the memory rows. See compare().
    ``kept_without``: the bytes each framework's model keeps with recompute off, where the caller measured them
    (else run_pair's; the memory row then judges the share kept too). ``deliberate``: settings that differ on purpose
    (transfer_rows)."""
    expected, actual, ref, transfer = runs.expected, runs.actual, runs.reference, runs.transfer
    name_map = dict(transfer.name_map)
    report = compare_results(expected, actual, rtol=rtol, atol=atol, equal_nan=equal_nan, reference=ref,
                             actual_reference=runs.actual_reference, probes=runs.probes)
    report.rows[:0] = [*transfer_rows(transfer, strict, deliberate), *runs.weights]
    report.rows += dropout_row(runs.tapes.masks) + draw_row(runs.tapes.draws)
    if report.meta.get("reference", {}).get("framework"):   # the round-off rule judged: the branches it took
        report.rows += kink_row(runs.tapes.branches)
    if runs.kept is not None:
        plain = kept_without or runs.kept_without or {}
        row = memory_row(runs.kept["torch"], runs.kept["mindspore"], plain.get("torch"), plain.get("mindspore"))
        if runs.memory_reason:
            row.message += f" (judged: {runs.memory_reason})"
        report.rows.append(row)
        report.meta["memory"] = {**runs.kept, "without_recompute": dict(plain), "measure": MEASURE,
                                 "why": runs.memory_reason}
        if runs.regions is not None and runs.regions.recomputed:
            report.rows.append(regions_row(runs.regions))
            report.meta["memory"]["regions_not_recomputed"] = list(runs.regions.lost)
    elif runs.memory_reason:
        report.meta["memory"] = {"skipped": runs.memory_reason}
    _unpaired_by_design(report, transfer)
    if runs.no_reference:
        report.meta["reference"] = {"skipped": runs.no_reference}
    elif runs.no_probe and "reference" in report.meta:
        report.meta["reference"]["probe_skipped"] = runs.no_probe
    if not expected.names("output") and not actual.names("output"):
        # No output tensor: no cotangent, so every gradient is a zero fill and would agree -- a pass proving nothing.
        report.rows.insert(0, CompareRow.verdict(
            "output", "output", False, "neither model returned a tensor (None, numbers or strings only), so there is "
                                       "nothing to compare and no gradient flowed — return the output tensors"))
    report.meta.update({
        "transfer": {
            "name_map": name_map,
            "skipped": [str(s) for s in (getattr(transfer, "skipped", None) or [])],
            "warnings": [str(w) for w in (getattr(transfer, "warnings", None) or [])],
        },
    })
    return report
