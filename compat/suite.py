"""The built-in differential suite: every zoo pair, every check, every available device.

    from recompat.compat import suite

    for case in suite.cases(devices=["cpu"], ms_modes=["pynative"]):
        outcome = suite.run_case(case)
        print(outcome.case.id, outcome.status, outcome.message)

Checks (one Case each; ``variant`` says which form):

=====================  ==================================================================================
check                  what must hold
=====================  ==================================================================================
torch-recompute        (a) torch, one torch form with recompute vs the same weights without: equal (1e-6)
mindspore-recompute    (b) MindSpore, one form with recompute vs without, in PYNATIVE or GRAPH mode: equal
cross                  (c) torch vs MindSpore on torch's weights (transfer_weights), recompute off
                       ("plain") or on ("recompute"): by the round-off rule against a float64 run of the
                       torch twin (the pair's rtol/atol only where it cannot run in float64); a paired
                       layer whose setting differs fails (strict); in PyNative the pair runs in its own
                       mode, active dropout with torch's masks replayed (compat.dropout_replay)
memory                 (d) bytes kept for backward by the forward (compat.memory.SavedTensors), with and
                       without recompute, per framework and form: recompute keeps fewer; time overhead
selective              (e) pairs with a selective-checkpointing policy (Pair.selective), both frameworks: bytes
                       kept with no checkpointing, whole-block recompute and the policy (what the policy's
                       store keeps counts); on each side the ops the policy saved are not run again in
                       backward and the others are (compat.dispatch_log: each op's runs recomputing the blocks
                       whole less its runs under the policy is what the policy saved; exact where the region
                       is recomputed to its end, early_stop=False);
                       the policy saves the same ops, as many times, on both sides (MindSpore's ops named as
                       the torch ops they stand for, mappings/selective.yaml); bytes kept under the policy
                       within SELECTIVE_BYTES of torch's
graph-recompute        (f) GRAPH mode, one MindSpore form: what the compiled gradient recomputes
                       (compat.graph_recompute, read from the graph MindSpore saves): nothing without
                       recompute; with it, operators under each module torch checkpoints
                       (Pair.checkpointed) and each op the twin marks itself (Primitive.recompute());
                       a region or op with none is a mark not taken (lost, on the wrong object, never
                       called), unless the zoo records why (Pair.graph_unrecomputed: ``known``, and it
                       must still hold)
=====================  ==================================================================================

Statuses: ``passed``; ``failed``; ``known`` (a difference the zoo records and explains: dropout masks that
MindSpore's native recompute redraws in PyNative mode; it must still differ -- a known difference that vanished
is ``failed``, so the zoo's record is kept true); ``skipped`` (with the reason: a device that is not there, a
form GRAPH mode cannot compile). BatchNorm statistics inside a recomputed region are updated twice in both
frameworks (``Pair.updated_twice``): in (a) and (b) those buffer rows are reported and not held against the
check; (c) compares them (both frameworks do the same).

Devices: ``cpu`` always; ``gpu`` is torch.cuda and MindSpore's GPU backend; ``ascend`` MindSpore's Ascend backend
(torch needs torch_npu there, which recompat does not drive). MindSpore's device is process-global: a process
runs MindSpore on one device. Record and replay (``record_dir`` / ``against_dir``): the cross check saves (or
loads instead of running) the torch side of each pair and variant, with torch's weights, so a GPU machine's torch
run can be checked against MindSpore elsewhere. On replay the float64 reference and the float32 run that measures
round-off are torch's on this machine's CPU; MindSpore and the recorded run are each judged by them (rows
``<name> (recorded on <device>)``), so a recording that is off fails as MindSpore would.

Planted bugs (:mod:`recompat.compat.mutants`) go through the same code: ``run_case(case, mutant=m)``.
"""
from __future__ import annotations

import io
import json
import statistics
import time
from dataclasses import asdict, dataclass, field, replace
from pathlib import Path
from typing import Any, Iterable

import numpy as np

from recompat._files import write_atomic
from recompat.constants import DEVICES, MS_MODES, MS_TARGETS, SUITE_CHECKS, TORCH_DEVICES

from . import zoo
from .compare import (CompareReport, PairRuns, compare_results, float64_twin, forward_context, judge_pair,
                      run_references)
from .dispatch_log import OpsRun
from .graph_recompute import primitive_marks, recomputed_ops, unrecomputed, within
from .memory import MEASURE, SavedTensors
from .runs import RunResult, load_arrays, normalise_inputs, run_mindspore, run_torch
from .tapes import Tapes
from .weights import transfer_weights

CHECKS = SUITE_CHECKS
STATUSES = ("passed", "failed", "known", "skipped")
SAME_FRAMEWORK = dict(rtol=1e-6, atol=1e-6)      # recompute must not change a value beyond float noise
SEED = 0
TIMING_REPEATS = 3
SELECTIVE_BYTES = 0.10    # bytes kept under a selective policy: MindSpore's within this fraction of torch's


@dataclass(frozen=True)
class Case:
    pair: str
    check: str
    variant: str          # torch-recompute: torch form; mindspore-recompute: MindSpore form;
                          # cross: plain | recompute; memory: torch:<form> | mindspore:<form>
    device: str = "cpu"
    ms_mode: str = "pynative"

    @property
    def id(self) -> str:
        return f"{self.pair}-{self.check}-{self.variant}-{self.device}-{self.ms_mode}"


@dataclass
class Outcome:
    case: Case
    status: str
    message: str = ""
    report: CompareReport | None = None
    figures: dict[str, Any] = field(default_factory=dict)
    seconds: float = 0.0

    def to_dict(self) -> dict[str, Any]:
        return {**asdict(self.case), "id": self.case.id, "status": self.status, "message": self.message,
                "figures": self.figures, "seconds": round(self.seconds, 3),
                "report": self.report.to_dict() if self.report is not None else None}


# --------------------------------------------------------------------------------------------------- devices

def torch_device(device: str) -> tuple[str | None, str]:
    """(torch device string, or None and why not)."""
    import torch

    if device == "gpu" and not torch.cuda.is_available():
        return None, "torch.cuda.is_available() is False on this machine"
    if device in TORCH_DEVICES:
        return TORCH_DEVICES[device], ""
    return None, "torch on Ascend needs torch_npu, which recompat does not drive; record the torch side elsewhere " \
                 "(--recompat-record) and compare here with --recompat-against"


def mindspore_device(device: str) -> tuple[str | None, str]:
    """(MindSpore device target, or None and why not). Sets the process's device on first use."""
    import mindspore
    import mindspore.hal

    target = MS_TARGETS[device]
    if not mindspore.hal.is_available(target):
        return None, (f"MindSpore {mindspore.__version__} here has no {target} backend "
                      f"(mindspore.hal.is_available({target!r}) is False)")
    current = mindspore.get_context("device_target")
    if current != target:
        try:
            mindspore.set_device(target)
        except Exception as err:   # the device is fixed once MindSpore has run
            return None, (f"MindSpore already runs on {current} in this process (its device is process-global): "
                          f"run the {device} cases in a process of their own (--recompat-device {device}): {err}")
    return target, ""


# --------------------------------------------------------------------------------------------------- cases

def cases(pairs: Iterable[str] | None = None, devices: Iterable[str] | None = None,
          ms_modes: Iterable[str] | None = None, checks: Iterable[str] | None = None) -> list[Case]:
    """Every (pair, check, variant, device, mode) the suite runs; device and mode filters apply."""
    pairs = list(pairs) if pairs is not None else zoo.names()
    devices = list(devices or DEVICES)
    ms_modes = list(ms_modes or MS_MODES)
    checks = list(checks or CHECKS)
    for name, values, allowed in (("device", devices, DEVICES), ("MindSpore mode", ms_modes, MS_MODES),
                                  ("check", checks, CHECKS)):
        unknown = [v for v in values if v not in allowed]
        if unknown:
            raise ValueError(f"unknown {name} {unknown}; choose from {list(allowed)}")
    out: list[Case] = []
    for pair in map(zoo.get, pairs):
        for device in devices:
            if "torch-recompute" in checks:
                out += [Case(pair.name, "torch-recompute", form, device, "-") for form in pair.torch_forms]
            for mode in ms_modes:
                if "mindspore-recompute" in checks:
                    out += [Case(pair.name, "mindspore-recompute", form, device, mode)
                            for form in pair.mindspore_forms]
                if "cross" in checks:
                    out += [Case(pair.name, "cross", v, device, mode) for v in ("plain", "recompute")]
            if "memory" in checks:
                out += [Case(pair.name, "memory", f"torch:{form}", device, "-") for form in pair.torch_forms]
                out += [Case(pair.name, "memory", f"mindspore:{form}", device, "pynative")
                        for form in pair.mindspore_forms]
            if "selective" in checks and pair.selective:
                out.append(Case(pair.name, "selective", "policy", device, "pynative"))
            if "graph-recompute" in checks and "graph" in ms_modes:
                out += [Case(pair.name, "graph-recompute", form, device, "graph") for form in pair.mindspore_forms]
    return out


# --------------------------------------------------------------------------------------------------- running

@dataclass
class Options:
    record_dir: Path | None = None
    against_dir: Path | None = None


def run_case(case: Case, *, mutant=None, options: Options | None = None) -> Outcome:
    """Run one case; never raises for a check that fails (an exception in a run is a failed outcome)."""
    options = options or Options()
    pair = zoo.get(case.pair)
    start = time.perf_counter()
    try:
        outcome = _RUNNERS[case.check](pair, case, mutant, options)
    except Exception as err:     # a run that raises is a failed check, named, with its cause
        outcome = Outcome(case, "failed", f"{type(err).__name__}: {err}")
    outcome.seconds = time.perf_counter() - start
    return outcome


def _mutated(mutant, side: str, role: str, model):
    return mutant.mutate(side, role, model) if mutant is not None else model


def _build_torch(pair, recompute: bool, form: str | None, device: str, mutant, training=None):
    return _mutated(mutant, "torch", "recompute" if recompute else "plain",
                    pair.build_torch(recompute, form, SEED, training))


def _build_ms(pair, recompute: bool, form: str | None, mutant, training=None):
    return _mutated(mutant, "mindspore", "recompute" if recompute else "plain",
                    pair.build_mindspore(recompute, form, SEED, training))


def _copy_torch(src, dst):
    dst.load_state_dict(src.state_dict())


def _copy_ms(src, dst):
    values = {name: p for name, p in src.parameters_and_names()}
    for name, p in dst.parameters_and_names():
        p.set_data(values[name].value().copy())


def _known_buffers(pair, report: CompareReport) -> list[str]:
    """Rows that differ only because BatchNorm statistics are updated twice under recompute."""
    return [r.name for r in report.failures
            if r.kind == "buffer" and any(r.name.startswith(layer + ".") for layer in pair.updated_twice)]


def _verdict(case: Case, pair, report: CompareReport, known: str = "") -> Outcome:
    twice = _known_buffers(pair, report)
    unexpected = [r for r in report.failures if r.name not in twice]
    note = (f"; {len(twice)} BatchNorm statistics updated twice under recompute, as in both frameworks "
            f"({', '.join(twice)})" if twice else "")
    if known:
        changed = [r.name for r in unexpected if r.kind == "output"]
        if changed:       # the zoo's known differences are in the recomputation, never in the forward
            return Outcome(case, "failed", f"recompute changed the forward ({', '.join(changed)}); the zoo records "
                                           f"only a backward difference: {known}", report)
        if unexpected:
            return Outcome(case, "known", f"known difference: {known}{note}", report)
        return Outcome(case, "failed", f"the zoo records a known difference ({known}) but the runs agree: "
                                       "update the pair's known_differences", report)
    if unexpected:
        warnings = [f"transfer warning: {w}" for w in (report.meta.get("transfer") or {}).get("warnings", [])]
        return Outcome(case, "failed", "\n".join([report.table(unexpected), *warnings, report.summary()]), report)
    return Outcome(case, "passed", report.summary() + note, report)


def _torch_recompute(pair, case, mutant, options):
    device, why = torch_device(case.device)
    if device is None:
        return Outcome(case, "skipped", why)
    plain = _build_torch(pair, False, case.variant, device, mutant)
    recomputed = _build_torch(pair, True, case.variant, device, mutant)
    _copy_torch(plain, recomputed)
    arrays = pair.make_inputs(SEED)
    grads = pair.differentiable(arrays)
    expected = run_torch(plain, arrays, seed=SEED, device=device, grad_inputs=grads)
    actual = run_torch(recomputed, arrays, seed=SEED, device=device, grad_inputs=grads)
    return _verdict(case, pair, compare_results(expected, actual, **SAME_FRAMEWORK),
                    pair.known_differences.get(f"torch:{case.variant}", ""))


def _graph_reason(pair, form: str) -> str:
    if pair.graph_skip:
        return pair.graph_skip
    notes = [n for n in pair.notes if "GRAPH" in n]
    return (f"{pair.name}: the {form} form does not compile in GRAPH mode on CPU (measured)"
            + (f": {notes[0]}" if notes else ""))


def _mindspore_recompute(pair, case, mutant, options):
    target, why = mindspore_device(case.device)
    if target is None:
        return Outcome(case, "skipped", why)
    if case.ms_mode == "graph" and case.variant not in pair.graph_forms:
        return Outcome(case, "skipped", _graph_reason(pair, case.variant))
    plain = _build_ms(pair, False, case.variant, mutant)
    recomputed = _build_ms(pair, True, case.variant, mutant)
    _copy_ms(plain, recomputed)
    arrays = pair.make_inputs(SEED)
    grads = pair.differentiable(arrays)
    expected = run_mindspore(plain, arrays, seed=SEED, mode=case.ms_mode, grad_inputs=grads)
    actual = run_mindspore(recomputed, arrays, seed=SEED, mode=case.ms_mode, grad_inputs=grads)
    known = pair.known_differences.get(f"mindspore:{case.variant}", "") if case.ms_mode == "pynative" else ""
    return _verdict(case, pair, compare_results(expected, actual, **SAME_FRAMEWORK), known)


def _torch_state(model) -> dict[str, np.ndarray]:
    return {k: v.detach().cpu().numpy() for k, v in model.state_dict().items()}


def _cross(pair, case, mutant, options):
    recompute = case.variant == "recompute"
    ms_form = pair.mindspore_forms[0]
    if case.ms_mode == "graph":
        if not recompute:
            ms_form = None
        elif pair.graph_forms:
            ms_form = pair.graph_forms[0]
        else:
            return Outcome(case, "skipped", _graph_reason(pair, "recompute"))
    target, why = mindspore_device(case.device)
    if target is None:
        return Outcome(case, "skipped", why)
    replay = options.against_dir is not None
    # PyNative, torch run here: torch's dropout masks are replayed on the other runs, so a pair runs in its own mode
    # (a recording holds no masks, and GRAPH mode draws its own: there cross_training, without active dropout)
    live = case.ms_mode == "pynative" and not replay and options.record_dir is None
    tapes = Tapes.for_pair(case.ms_mode) if live else Tapes()
    training = pair.training if live else pair.cross_mode_training
    arrays = pair.make_inputs(SEED)
    grads = pair.differentiable(arrays)
    device, why = ("cpu", "") if replay else torch_device(case.device)
    if device is None:
        return Outcome(case, "skipped", why)
    tmodel = _build_torch(pair, recompute, None, device, mutant, training)
    mmodel = _build_ms(pair, recompute, ms_form, mutant, training)
    weights = _torch_state(tmodel)
    transfer = transfer_weights(tmodel, mmodel)           # before the torch step changes any buffer
    twin, no_reference = float64_twin(tmodel)             # the round-off rule's reference, the same moment
    if mutant is not None:
        mutant.after_transfer(mmodel)
    calibration = None
    if replay:
        expected_runs = _replayed(Path(options.against_dir), case, weights)
        if isinstance(expected_runs, Outcome):
            return expected_runs
        if twin is not None:
            # the round-off rule's measure of float32 round-off comes from a torch run beside the reference: here,
            # on the CPU. A recording from another device is judged by it, as MindSpore is
            calibration = run_torch(tmodel, arrays, seed=SEED, device=device, grad_inputs=grads)
    else:
        with tapes.torch() as phase:
            expected = run_torch(tmodel, arrays, seed=SEED, device=device, grad_inputs=grads,
                                 forward_context=forward_context(None, phase))
        expected_runs = {device: expected}
        if options.record_dir is not None:
            _record(Path(options.record_dir), case, device, expected, weights)
    with tapes.mindspore() as phase:
        actual = run_mindspore(mmodel, arrays, seed=SEED, mode=case.ms_mode, name_map=transfer.name_map,
                               grad_inputs=grads, forward_context=forward_context(None, phase))
    # on the torch device of this run (replay: here, on the CPU), whatever device a recording came from
    refs = run_references(twin, arrays, tapes, seed=SEED, device=device, grad_inputs=grads)
    reference = refs.reference
    rtol, atol = pair.tolerance          # only where the torch model cannot run in float64
    verdicts = []
    for torch_on, expected in expected_runs.items():
        calibrated = calibration is not None and reference is not None
        runs = PairRuns(calibration if calibrated else expected, actual, reference, transfer,
                        no_reference or refs.no_reference, tapes=tapes, actual_reference=refs.actual_reference,
                        probes=refs.probes, no_probe=refs.no_probe)
        report = judge_pair(runs, rtol=rtol, atol=atol, deliberate=pair.settings_differ)
        if calibrated:
            recorded = replace(expected, framework=f"torch recorded on {torch_on}")
            report.rows += [replace(r, name=f"{r.name} (recorded on {torch_on})")
                            for r in compare_results(calibration, recorded, reference=reference,
                                                     probes=refs.probes).rows]
        report.meta["torch_device"] = torch_on
        verdicts.append(_verdict(case, pair, report))
    failed = [v for v in verdicts if v.status != "passed"]
    outcome = failed[0] if failed else verdicts[0]
    if replay:
        outcome.message = f"against torch recorded on {', '.join(expected_runs)}: {outcome.message}"
    return outcome


def _record_stem(case: Case) -> str:
    return f"{case.pair}-{case.variant}"


def _record(directory: Path, case: Case, torch_device_name: str, run: RunResult, weights: dict) -> None:
    """<pair>-<variant>.<torch device>.npz (+ .json) and .weights.npz: the torch side of one cross case."""
    directory.mkdir(parents=True, exist_ok=True)
    stem = f"{_record_stem(case)}.{torch_device_name.replace(':', '')}"
    run.to_npz(directory / f"{stem}.npz")
    buffer = io.BytesIO()
    np.savez(buffer, **weights)
    write_atomic(directory / f"{stem}.weights.npz", buffer.getvalue())


def _replayed(directory: Path, case: Case, weights: dict) -> dict[str, RunResult] | Outcome:
    """Every recorded torch run of this case (one per torch device it was recorded on), weights checked."""
    if not directory.is_dir():
        raise FileNotFoundError(f"--recompat-against {directory}: no such directory (make one with --recompat-record)")
    runs = {}
    for path in sorted(directory.glob(f"{_record_stem(case)}.*.npz")):
        if path.name.endswith(".weights.npz"):
            continue
        torch_on = path.name[len(_record_stem(case)) + 1:-len(".npz")]
        weights_path = path.with_name(path.name[:-len(".npz")] + ".weights.npz")
        recorded = load_arrays(weights_path, "record it again with --recompat-record")
        differing = [k for k in weights if k not in recorded or not np.array_equal(weights[k], recorded[k])]
        if differing:
            return Outcome(case, "failed", f"the recorded torch weights in {weights_path} differ from this "
                                           f"machine's build of {case.pair} ({', '.join(differing[:5])}): record "
                                           "and replay with the same recompat and torch versions")
        runs[torch_on] = RunResult.from_npz(path)
    if not runs:
        return Outcome(case, "skipped", f"no recorded torch run of {_record_stem(case)} in {directory} "
                                        "(record one with --recompat-record)")
    return runs


def _kept_and_time(run, make_counter) -> tuple[int, float]:
    counter = make_counter()
    run(lambda: counter)
    times = []
    for _ in range(TIMING_REPEATS):
        start = time.perf_counter()
        run(None)
        times.append(time.perf_counter() - start)
    return counter.bytes, statistics.median(times)


def _side_run(pair, framework: str, recompute: bool, form: str, device: str, mutant):
    """``run(forward_context)``: one forward and backward of `framework`'s twin on the pair's inputs; or, where
    `device` is not there, why."""
    arrays = pair.make_inputs(SEED)
    grads = pair.differentiable(arrays)
    if framework == "torch":
        torch_dev, why = torch_device(device)
        if torch_dev is None:
            return why
        model = _build_torch(pair, recompute, form, torch_dev, mutant)
        return lambda context: run_torch(model, arrays, seed=SEED, device=torch_dev, grad_inputs=grads,
                                         forward_context=context)
    target, why = mindspore_device(device)
    if target is None:
        return why
    model = _build_ms(pair, recompute, form, mutant)
    return lambda context: run_mindspore(model, arrays, seed=SEED, grad_inputs=grads, forward_context=context)


def _memory(pair, case, mutant, options):
    framework, form = case.variant.split(":")
    kept = {}
    for recompute in (False, True):
        run = _side_run(pair, framework, recompute, form, case.device, mutant)
        if isinstance(run, str):
            return Outcome(case, "skipped", run)
        kept[recompute] = _kept_and_time(run, lambda: SavedTensors(framework))
    (plain_bytes, plain_s), (rec_bytes, rec_s) = kept[False], kept[True]
    measure = MEASURE
    if framework == "mindspore" and form == "cell":
        measure += "; MindSpore's reentrant engine (Cell.recompute) keeps each region's inputs itself: not counted"
    figures = {"measure": measure, "framework": framework, "form": form,
               "plain_bytes": plain_bytes, "recompute_bytes": rec_bytes,
               "saved_bytes": plain_bytes - rec_bytes,
               "ratio": plain_bytes / rec_bytes if rec_bytes else None,
               "plain_seconds": plain_s, "recompute_seconds": rec_s,
               "time_overhead": rec_s / plain_s if plain_s else None}
    text = (f"{framework} {form}: {plain_bytes:,} -> {rec_bytes:,} bytes kept for backward "
            f"({figures['saved_bytes']:,} saved), time x{figures['time_overhead']:.2f}")
    floor = pair.memory_ratio
    if rec_bytes >= plain_bytes:
        return Outcome(case, "failed", f"recompute saves nothing: {text}", figures=figures)
    if floor and plain_bytes < floor * rec_bytes:
        return Outcome(case, "failed", f"recompute saves less than the pair's floor of {floor}x: {text}",
                       figures=figures)
    return Outcome(case, "passed", text, figures=figures)


def _selective_side(pair, framework: str, device: str, mutant) -> dict | str:
    """Bytes kept and ops run for no checkpointing, the whole-block form and the policy form; or why not run."""
    policy_form, full_form = pair.selective[framework]
    side: dict = {}
    for config, recompute, form in (("plain", False, policy_form), ("full", True, full_form),
                                    ("policy", True, policy_form)):
        run = _side_run(pair, framework, recompute, form, device, mutant)
        if isinstance(run, str):
            return run
        counter = SavedTensors(framework)
        with OpsRun(framework) as ran:
            run(lambda: counter)
        side[config] = {"bytes": counter.bytes, "ran": ran.counts, "decisions": counter.decisions,
                        "ran_decisions": counter.ran_decisions}
    return side


def _saved_per_op(decisions) -> dict[str, int]:
    ops = {op for op, _ in decisions}
    return {op: decisions[op, True] for op in sorted(ops)}


def _selective(pair, case, mutant, options):
    sides = {}
    for framework in ("torch", "mindspore"):
        side = _selective_side(pair, framework, case.device, mutant)
        if isinstance(side, str):
            return Outcome(case, "skipped", side)
        sides[framework] = side
    problems, figures = [], {"measure": MEASURE}
    for framework, side in sides.items():
        plain_bytes, policy_bytes = side["plain"]["bytes"], side["policy"]["bytes"]
        figures[framework] = {"plain_bytes": plain_bytes, "full_bytes": side["full"]["bytes"],
                              "policy_bytes": policy_bytes, "saved": _saved_per_op(side["policy"]["decisions"])}
        if not side["policy"]["decisions"]:
            problems.append(f"{framework}: no op went through a selective-checkpointing policy (the policy form "
                            "recomputes whole blocks, or does not checkpoint)")
        if policy_bytes >= plain_bytes:
            problems.append(f"{framework}: the policy keeps {policy_bytes:,} bytes, no fewer than no checkpointing "
                            f"({plain_bytes:,})")
        # what the policy spared, seen from outside: each op's runs recomputing the blocks whole less its runs
        # under the policy (the same forward and the same gradient ops, shim included, on both)
        decided, full, policy = side["policy"]["ran_decisions"], side["full"]["ran"], side["policy"]["ran"]
        spared = {n: full[n] - policy[n] for n in sorted({n for n, _ in decided})}
        figures[framework]["not_run_again"] = spared
        for name, times in spared.items():
            if times != decided[name, True]:
                problems.append(f"{framework}: {name}: the policy saved {decided[name, True]} and recomputes "
                                f"{decided[name, False]}, but backward ran it {times} fewer times than recomputing "
                                "the blocks whole: " + ("saved ops ran again" if times < decided[name, True]
                                                        else "ops the policy recomputes did not run"))
        if sum(decided[n, False] for n, _ in decided) and not sum((policy - side["plain"]["ran"]).values()):
            problems.append(f"{framework}: the policy recomputes ops but backward ran none of them again")
    saved_t, saved_m = figures["torch"]["saved"], figures["mindspore"]["saved"]
    for op in sorted(set(saved_t) | set(saved_m)):
        if saved_t.get(op, 0) != saved_m.get(op, 0) and (saved_t.get(op, 0) or saved_m.get(op, 0)):
            problems.append(f"{op}: torch's policy saved it {saved_t.get(op, 0)} times, MindSpore's "
                            f"{saved_m.get(op, 0)}")
    t_bytes, m_bytes = figures["torch"]["policy_bytes"], figures["mindspore"]["policy_bytes"]
    if abs(m_bytes - t_bytes) > SELECTIVE_BYTES * t_bytes:
        problems.append(f"bytes kept under the policy: MindSpore {m_bytes:,}, torch {t_bytes:,} (more than "
                        f"{SELECTIVE_BYTES:.0%} apart)")
    text = "; ".join(f"{fw}: {f['plain_bytes']:,} plain, {f['full_bytes']:,} whole blocks, {f['policy_bytes']:,} "
                     f"policy" for fw, f in ((fw, figures[fw]) for fw in sides))
    if problems:
        return Outcome(case, "failed", "\n".join([text] + problems), figures=figures)
    return Outcome(case, "passed", text, figures=figures)


def _graph_recompute(pair, case, mutant, options):
    target, why = mindspore_device(case.device)
    if target is None:
        return Outcome(case, "skipped", why)
    if case.variant not in pair.graph_forms:
        return Outcome(case, "skipped", _graph_reason(pair, case.variant))
    import mindspore

    values, keys = normalise_inputs(pair.make_inputs(SEED))
    tensors = [mindspore.Tensor(v) if isinstance(v, np.ndarray) else v for v in values]
    args, kwargs = (tensors, {}) if keys is None else ([], dict(zip(keys, tensors)))
    seen, marked_ops = {}, []
    for recompute in (False, True):
        cell = _build_ms(pair, recompute, case.variant, mutant)
        if recompute:
            marked_ops = primitive_marks(cell)
        seen[recompute] = recomputed_ops(cell, *args, **kwargs)
    regions = pair.checkpointed
    by_scope: dict[str, list[str]] = {}
    for op in seen[True]:
        by_scope.setdefault(op.scope, []).append(f"{op.op} ({op.mark})")
    missing = unrecomputed(seen[True], regions)
    missing += [f"{scope or '(top)'}/{name} (op mark)" for scope, name in marked_ops
                if not any(op.scope == scope and op.op == name for op in seen[True])]
    figures = {"form": case.variant, "checkpointed": list(regions), "recomputed": by_scope,
               "outside": sorted(s for s in by_scope if not any(within(s, r) for r in regions)),
               "missing": missing, "ops": len(seen[True]), "ops_without_recompute": len(seen[False])}
    shown = ", ".join(f"{scope or '(top)'}: {len(ops)}" for scope, ops in by_scope.items()) or "nothing"
    if seen[False]:
        return Outcome(case, "failed", f"the graph recomputes {len(seen[False])} operators without any recompute "
                                       f"mark: {', '.join(map(str, seen[False]))}", figures=figures)
    known = pair.graph_unrecomputed.get(case.variant)
    if known:
        if missing:
            return Outcome(case, "known", f"nothing recomputed under {_listed(missing)}, as the zoo records: "
                                          f"{known}", figures=figures)
        return Outcome(case, "failed", f"the zoo records that GRAPH mode recomputes none of {_listed(regions)} "
                                       f"({known}), but it recomputes {shown}: update the pair's graph_unrecomputed",
                       figures=figures)
    if missing:
        return Outcome(case, "failed", f"recompute mark not taken: nothing recomputed under {_listed(missing)} "
                                       f"(torch checkpoints {_listed(regions)}; the compiled graph recomputes "
                                       f"{shown})", figures=figures)
    return Outcome(case, "passed", f"{len(seen[True])} operators recomputed under {_listed(regions)} "
                                   f"({shown})", figures=figures)


def _listed(names, most: int = 6) -> str:
    names = list(names)
    return ", ".join(names[:most]) + (f" and {len(names) - most} more" if len(names) > most else "")


_RUNNERS = {"torch-recompute": _torch_recompute, "mindspore-recompute": _mindspore_recompute,
            "cross": _cross, "memory": _memory, "selective": _selective, "graph-recompute": _graph_recompute}


# --------------------------------------------------------------------------------------------------- summaries

def summary_table(results: list[dict]) -> str:
    """One line per pair x check: counts per status, and the memory figures where measured.
    ``results`` are ``Outcome.to_dict()`` values (what travels from pytest-xdist workers)."""
    groups: dict[tuple[str, str], list[dict]] = {}
    for r in results:
        groups.setdefault((r["pair"], r["check"]), []).append(r)
    rows = [("pair", "check", *STATUSES,
             "memory: bytes kept plain/recompute, time overhead; selective: bytes; graph-recompute: ops")]
    for (pair, check), group in sorted(groups.items()):
        notes = []
        for r in group:
            f = r.get("figures") or {}
            if f.get("ratio"):
                notes.append(f"{f['framework']}:{f['form']} {f['ratio']:.2f}x, time x{f['time_overhead']:.2f}")
            for side in ("torch", "mindspore"):      # the selective check: none / whole blocks / policy
                if isinstance(f.get(side), dict) and "policy_bytes" in f[side]:
                    s = f[side]
                    notes.append(f"{side} {s['plain_bytes']:,}/{s['full_bytes']:,}/{s['policy_bytes']:,} "
                                 "none/whole/policy")
            if check == "graph-recompute" and "ops" in f:
                notes.append(f"{f['form']} {f['ops']} ops recomputed")
        rows.append((pair, check, *(str(sum(r["status"] == s for r in group)) for s in STATUSES),
                     "; ".join(notes)))
    widths = [max(len(row[i]) for row in rows) for i in range(len(rows[0]) - 1)]
    lines = ["  ".join(c.ljust(w) for c, w in zip(row[:-1], widths)) + "  " + row[-1] for row in rows]
    totals = ", ".join(f"{sum(r['status'] == s for r in results)} {s}" for s in STATUSES)
    lines.append(f"{totals} ({len(results)} cases)")
    return "\n".join(line.rstrip() for line in lines)


def write_json(results: list[dict], path: str | Path, **meta) -> Path:
    """Results (``Outcome.to_dict()`` values: every case, its rows and figures) as JSON, written whole or not at all."""
    path = Path(path)
    data = {"format": 1, "kind": "recompat-suite", "meta": meta,
            "totals": {s: sum(r["status"] == s for r in results) for s in STATUSES},
            "results": results}
    path.parent.mkdir(parents=True, exist_ok=True)
    write_atomic(path, json.dumps(data, indent=1, default=str))
    return path
