"""Where a failing pair first parts: the first module whose forward output differs, and going back, the first whose
input gradient does.

compare() reruns a failing pair (``localise="auto"``, the default; ``True`` always) with a ``Watch`` on every run:
torch's float32 run, MindSpore's, and the float64 reference runs the round-off rule reads. The watch records, per
module call, the call's tensor outputs (kind "output") and the gradients of its tensor inputs (kind "input-grad")
under names like ``layers.6.norm#0:output`` and ``layers.6.norm#0:input[0].grad`` (``#n``: the n-th call of that
module in the forward; ``input[k]``: its k-th positional tensor argument). The records are judged with
compare_results, by the same round-off rule as the model's own tensors, and ``Localisation`` names the first failing
output in torch's order of completion (a module completes after the modules it calls) and the first failing input
gradient in the order torch's backward reaches them.

Pairing. A MindSpore cell is paired with the torch module of the same path (a translated model keeps its attribute
names), or, where the weight transfer renamed a parameter, with the module that holds the parameter it was paired
with (``transfer.name_map``). A cell with no pair (MindSpore's recompute wrapper, ``a._recompute_cell``) is not
watched; a name recorded on one side only (a call the other side never makes, an input MindSpore gives no gradient)
is not judged.

How each side is watched (both measured on torch 2.13 and MindSpore 2.10, PyNative):

* torch: a forward pre-hook passes each tensor argument that requires grad on as ``a.view_as(a)`` and hooks the
  view's gradient (that module's own input gradient, where the tensor also goes elsewhere, as in ``x + f(x)``); a
  forward hook records the outputs. A view changed in place never calls its hook, so a module that says it works in
  place (``inplace=True``: ReLU, Dropout, ...) gets a copy instead; it then leaves the caller's tensor as it was,
  which only code that reads the changed input instead of the module's result would notice. An input another
  module changes in place has no gradient recorded (one-sided, not judged). ``register_full_backward_hook`` is not
  used: it breaks modules that change their output in place ("Output 0 of BackwardHookFunction is a view and is
  being modified inplace").
* MindSpore: ``Cell.register_forward_hook`` records the outputs; ``Cell.register_backward_hook`` gives the gradients
  of the cell's tensor inputs (None for one that takes none), cells in backward order, the last call of a cell
  first. A cell with its own ``bprop`` calls neither hook: it is not judged, the cell that calls it is.
* A checkpointed region reruns its forward in backward (torch's checkpoint, MindSpore's recompute): forward hooks
  fire again then. Outputs are recorded during the forward only (``Watch.forward``, entered by runs.py's
  forward_context), so calls pair with calls, not with counters. Inside torch's reentrant checkpoint the forward
  runs without grad: its modules' outputs are recorded, their input gradients are not (one-sided, not judged).
"""
from __future__ import annotations

import contextlib
from dataclasses import dataclass, field
from typing import Any, Mapping

from .runs import ForwardPhase, RunResult, flatten_outputs

ROOT = "<model>"        # the name of the whole model's path ("") in records and reports
MOST = 0.9              # locate_memory descends into a sub-module holding this share of its module's excess


def record_name(path: str, call: int, what: str) -> str:
    """``layers.6.norm#0:output[1]``; ``what`` is ``output...`` or ``input[k].grad``."""
    return f"{path or ROOT}#{call}:{what}"


def split_name(name: str) -> tuple[str, int, str]:
    """(path, call, what) of a record_name; the model's own path is ''."""
    head, what = name.split(":", 1)
    path, call = head.rsplit("#", 1)
    return ("" if path == ROOT else path), int(call), what


class Watch(ForwardPhase):
    """Hooks recording every module call's outputs and input gradients, one RunResult per run (``runs``, by label).
    Enter ``torch(model, label)`` or ``mindspore(cell, label, name_map)`` around a run and ``forward()`` around its
    forward (compare's forward_context does)."""

    def __init__(self):
        self.runs: dict[str, RunResult] = {}
        self.classes: dict[str, dict[str, str]] = {"torch": {}, "mindspore": {}}   # torch path -> class name
        self.ms_paths: dict[str, str] = {}       # torch path -> MindSpore path, for the cells watched
        self._torch_paths: set[str] = set()
        self._running: dict[str, list[str]] = {"torch": [], "mindspore": []}   # the calls open, innermost last
        # output storage -> (module, the output: held, so that no later tensor takes its address while watched)
        self._produced: dict[str, dict[int, tuple[str, Any]]] = {"torch": {}, "mindspore": {}}
        self.kept: dict[str, dict[str, int]] = {}    # framework -> bytes kept for backward, by module
        self.holding: set[str] = set()               # torch paths of the modules holding parameters of their own

    def owner(self, framework: str):
        """The function naming the module a saved tensor is charged to (compat.memory.SavedTensors' owner): the
        module whose output it is, else the innermost module running ('' outside every watched one). By producer
        first, because the two frameworks save a recomputed block's input in different places (torch's checkpoint
        in the caller, MindSpore's recompute inside the block), while it is the output of the same module."""
        running, produced = self._running[framework], self._produced[framework]
        return lambda t: produced.get(_storage(t), (running[-1] if running else "",))[0]

    def _result(self, label: str, framework: str) -> RunResult:
        if label in self.runs:
            raise ValueError(f"run {label!r} watched twice")
        self.runs[label] = RunResult(framework=framework)
        return self.runs[label]

    @contextlib.contextmanager
    def torch(self, model, label: str):
        """Watch a torch model's modules for one run (recorded into ``runs[label]``)."""
        import torch

        from .runs import _torch_dtype_name, _torch_numpy

        result = self._result(label, "torch")
        calls: dict[str, int] = {}
        open_calls: dict[str, list[int]] = {}

        def pre_hook(path):
            def hook(module, args):
                call = None
                if self.in_forward:
                    call = calls[path] = calls.get(path, -1) + 1
                    open_calls.setdefault(path, []).append(call)
                    self._running["torch"].append(path)
                record_grads = call is not None and torch.is_grad_enabled()
                new, k, changed = [], 0, False
                for a in args:
                    if isinstance(a, torch.Tensor):
                        if a.requires_grad:      # also while recomputing: the graph stays the one it was
                            a, changed = (a.clone() if getattr(module, "inplace", None) is True else a.view_as(a)), True
                            if record_grads:
                                name = record_name(path, call, f"input[{k}].grad")
                                a.register_hook(lambda g, name=name, dt=a.dtype: _add(
                                    result, name, "input-grad", _torch_numpy(g), _torch_dtype_name(dt)))
                        k += 1
                    new.append(a)
                return tuple(new) if changed else None
            return hook

        def forward_hook(path):
            def hook(module, args, output):
                if not self.in_forward or not open_calls.get(path):
                    return
                call = open_calls[path].pop()
                self._running["torch"].pop()
                for what, _p, t in flatten_outputs(output, lambda o: isinstance(o, torch.Tensor)):
                    self._produced["torch"].setdefault(_storage(t), (path, t))
                    _add(result, record_name(path, call, what), "output", _torch_numpy(t), _torch_dtype_name(t.dtype))
            return hook

        handles = []
        for path, module in model.named_modules():
            self._torch_paths.add(path)
            self.classes["torch"].setdefault(path, type(module).__name__)
            if next(module.parameters(recurse=False), None) is not None:
                self.holding.add(path)
            handles += [module.register_forward_pre_hook(pre_hook(path)),
                        module.register_forward_hook(forward_hook(path))]
        try:
            yield result
        finally:
            for h in handles:
                h.remove()
            self._produced[result.framework].clear()

    @contextlib.contextmanager
    def mindspore(self, cell, label: str, name_map: Mapping[str, str]):
        """Watch a MindSpore cell's cells for one run, named by the torch paths they pair with (pair_paths)."""
        from mindspore import Tensor

        from .runs import _ms_dtype_name, _ms_is_float, _ms_numpy

        result = self._result(label, "mindspore")
        cells = dict(cell.cells_and_names())
        paths = pair_paths(self._torch_paths, cells, name_map)
        calls: dict[str, int] = {}
        returned: dict[str, int] = {}          # backward hooks seen per cell

        def pre_hook(path):
            def hook(c, inputs):
                if self.in_forward:
                    self._running["mindspore"].append(path)
            return hook

        def forward_hook(path):
            def hook(c, inputs, output):
                if not self.in_forward:
                    return
                self._running["mindspore"].pop()
                call = calls[path] = calls.get(path, -1) + 1
                for what, _p, t in flatten_outputs(output, lambda o: isinstance(o, Tensor)):
                    self._produced["mindspore"].setdefault(_storage(t), (path, t))
                    _add(result, record_name(path, call, what), "output", _ms_numpy(t), _ms_dtype_name(t.dtype))
            return hook

        def backward_hook(path):
            def hook(c, grad_input, grad_output):
                seen = returned[path] = returned.get(path, -1) + 1
                call = calls.get(path, -1) - seen      # the last call's gradient comes first
                if call < 0:
                    return
                for k, g in enumerate(grad_input or ()):
                    if isinstance(g, Tensor) and _ms_is_float(g):
                        _add(result, record_name(path, call, f"input[{k}].grad"), "input-grad", _ms_numpy(g),
                             _ms_dtype_name(g.dtype))
            return hook

        handles = []
        for ms_path, torch_path in paths.items():
            c = cells[ms_path]
            self.ms_paths.setdefault(torch_path, ms_path)
            self.classes["mindspore"].setdefault(torch_path, type(c).__name__)
            handles += [c.register_forward_pre_hook(pre_hook(torch_path)),
                        c.register_forward_hook(forward_hook(torch_path)),
                        c.register_backward_hook(backward_hook(torch_path))]
        try:
            yield result
        finally:
            for h in handles:
                h.remove()
            self._produced[result.framework].clear()


def _storage(t) -> int:
    """The address of a tensor's storage, as compat.memory.SavedTensors keys it."""
    storage = getattr(t, "untyped_storage", None)
    return storage().data_ptr() if storage is not None else t.data_ptr()


def _add(result: RunResult, name: str, kind: str, array, dtype: str) -> None:
    if name not in result.tensors:          # a gradient hooked twice (the same view passed on twice) is kept once
        result.add(name, kind, array, dtype)


def pair_paths(torch_paths, ms_cells: Mapping[str, Any], name_map: Mapping[str, str]) -> dict[str, str]:
    """{MindSpore cell path: torch module path} for the cells that have a pair: the same path, else the module
    holding the torch parameter that a parameter of the cell was paired with."""
    torch_paths = set(torch_paths)
    by_params = {}
    for torch_name, ms_name in name_map.items():
        t_path, m_path = _owner(torch_name), _owner(ms_name)
        if t_path in torch_paths:
            by_params.setdefault(m_path, t_path)
    pairs = {}
    for path in ms_cells:
        torch_path = path if path in torch_paths else by_params.get(path)
        if torch_path is not None and torch_path not in pairs.values():
            pairs[path] = torch_path
    return pairs


def listed_paths(paths, at_most: int = 3) -> str:
    """Module paths for a message, in model order (layers.2 before layers.10), the first ``at_most`` and how many
    more; the model itself as ROOT."""
    paths = sorted((p or ROOT for p in paths),
                   key=lambda p: [(0, int(part), "") if part.isdigit() else (1, 0, part) for part in p.split(".")])
    return ", ".join(paths[:at_most]) + (f", ... {len(paths) - at_most} more" if len(paths) > at_most else "")


def _owner(param_name: str) -> str:
    return param_name.rsplit(".", 1)[0] if "." in param_name else ""


@dataclass
class Divergence:
    """The first module call whose output (or input gradient) fails."""
    direction: str            # "forward" or "backward"
    torch_path: str
    mindspore_path: str
    call: int
    calls: int                # the calls that module made in the forward
    torch_class: str
    mindspore_class: str
    row: Any                  # the CompareRow that failed
    after_forward: bool = False   # backward: that call's own output differs too, so its gradient follows from it

    def describe(self) -> str:
        what = "output" if self.direction == "forward" else "input gradient"
        where = self.torch_path or ROOT
        ms_where = self.mindspore_path or ROOT
        paths = where if ms_where == where else f"{where} (MindSpore {ms_where})"
        call = f", call {self.call + 1} of {self.calls}" if self.calls > 1 else ""
        r = self.row
        err = f"max abs error {r.max_abs_err:.3g}" if r.max_abs_err is not None else "not comparable"
        tensor = split_name(r.name)[2]
        if tensor not in ("output", "input[0].grad"):     # which output, which input
            what = f"{what} {tensor}"
        follows = " -- its forward output differs already, so this follows from the forward" if self.after_forward \
            else ""
        return (f"{paths} [{self.torch_class} / {self.mindspore_class}{call}]: {what} differs, {err}{follows}"
                + (f" ({r.message})" if r.message else ""))

    def as_json(self) -> dict:
        r = self.row
        return {"direction": self.direction, "torch_path": self.torch_path, "mindspore_path": self.mindspore_path,
                "call": self.call, "calls": self.calls, "torch_class": self.torch_class,
                "mindspore_class": self.mindspore_class, "tensor": r.name, "max_abs_err": r.max_abs_err,
                "after_forward": self.after_forward,
                "message": r.message, "text": self.describe()}


@dataclass
class MemoryExcess:
    """The module holding most of what MindSpore keeps for backward beyond torch (bytes saved while it, or a
    module inside it, ran)."""
    torch_path: str
    mindspore_path: str
    torch_class: str
    mindspore_class: str
    torch_bytes: int
    mindspore_bytes: int
    excess: int               # the whole model's: MindSpore's bytes minus torch's

    def describe(self) -> str:
        where = self.torch_path or ROOT
        ms_where = self.mindspore_path or ROOT
        paths = where if ms_where == where else f"{where} (MindSpore {ms_where})"
        share = (self.mindspore_bytes - self.torch_bytes) / self.excess
        return (f"{paths} [{self.torch_class} / {self.mindspore_class}]: torch keeps {self.torch_bytes:,} bytes for "
                f"backward there, MindSpore {self.mindspore_bytes:,} ({share:.0%} of the {self.excess:,} bytes "
                "MindSpore keeps beyond torch): a recompute mark lost there?")

    def as_json(self) -> dict:
        return {"torch_path": self.torch_path, "mindspore_path": self.mindspore_path,
                "torch_class": self.torch_class, "mindspore_class": self.mindspore_class,
                "torch_bytes": self.torch_bytes, "mindspore_bytes": self.mindspore_bytes, "excess": self.excess,
                "text": self.describe()}


def locate_memory(watch: Watch) -> MemoryExcess | None:
    """Where MindSpore keeps more for backward than torch: from the whole model, down into the sub-module that
    holds nearly all (MOST) of its module's excess, as long as one does -- a block whose mark was lost, not the
    layer inside it that saves the most. None when MindSpore keeps no more."""
    torch_kept, ms_kept = watch.kept.get("torch", {}), watch.kept.get("mindspore", {})

    def within(counter, path):
        return sum(v for p, v in counter.items() if not path or p == path or p.startswith(path + "."))

    def excess(path):
        return within(ms_kept, path) - within(torch_kept, path)

    total = excess("")
    if total <= 0:
        return None
    here, paths = "", set(watch.classes["torch"])
    while True:
        children = [p for p in paths if p and _owner(p) == here]
        best = max(children, key=excess, default=None)
        if best is None or excess(best) < MOST * excess(here):
            break
        here = best
    return MemoryExcess(here, watch.ms_paths.get(here, here), watch.classes["torch"].get(here, "?"),
                        watch.classes["mindspore"].get(here, "?"), within(torch_kept, here), within(ms_kept, here),
                        total)


@dataclass
class Localisation:
    """What the watched rerun found: the first divergence each way (None where all paired calls agree)."""
    forward: Divergence | None
    backward: Divergence | None
    judged: int               # records judged (present on both sides)
    modules: int              # module paths paired and called
    note: str = ""            # how the rerun differed from the failing run, where it did
    memory: MemoryExcess | None = None    # where MindSpore keeps more for backward, when the memory row failed
    tree: list = field(default_factory=list)    # module_tree: what the HTML report draws
    uncalled: list = field(default_factory=list)    # paired modules with parameters torch calls, MindSpore never

    def lines(self) -> list[str]:
        if self.forward is None and self.backward is None:
            found = [f"localisation: the {self.modules} paired modules agree in every output and input gradient "
                     "(a failure lies outside them: a setting, a buffer, a parameter's gradient)"]
        else:
            found = [f"first divergence, forward: {self.forward.describe()}" if self.forward else
                     f"first divergence, forward: none (all {self.modules} paired modules' outputs agree)",
                     f"first divergence, going back: {self.backward.describe()}" if self.backward else
                     "first divergence, going back: none (every paired input gradient agrees)"]
        if self.uncalled:
            them = "it" if len(self.uncalled) == 1 else "them"
            found.insert(0, f"never called by MindSpore: {listed_paths(self.uncalled)} -- torch calls {them}; the "
                            "port uses its weights another way, or not at all")
        if self.memory is not None:
            found.append(f"memory kept for backward, most beyond torch's: {self.memory.describe()}")
        return found + ([f"  ({self.note})"] if self.note else [])

    def as_json(self) -> dict:
        return {"forward": self.forward.as_json() if self.forward else None,
                "backward": self.backward.as_json() if self.backward else None,
                "judged": self.judged, "modules": self.modules, "note": self.note,
                "memory": self.memory.as_json() if self.memory else None, "uncalled": self.uncalled,
                "lines": self.lines(), "tree": self.tree}


def paired_runs(watch: Watch, with_reference: bool = True) -> dict:
    """compare_results' runs (expected, actual, reference, actual_reference, probes) from the watched records,
    each holding only the names both float32 runs recorded (labels as run_pair gives them). ``with_reference``:
    whether the pair's reference run completed (else its records are partial, and rtol/atol judge)."""
    expected, actual = watch.runs["torch"], watch.runs["mindspore"]
    both = [n for n in expected.tensors if n in actual.tensors]

    def only(run: RunResult | None) -> RunResult | None:
        if run is None or not with_reference and run is not expected and run is not actual:
            return None
        kept = RunResult(run.framework, meta=run.meta)
        for n in both:
            if n in run.tensors:
                kept.add(n, run.kinds[n], run.tensors[n], run.dtypes[n])
        return kept

    return {"expected": only(expected), "actual": only(actual), "reference": only(watch.runs.get("torch:reference")),
            "actual_reference": only(watch.runs.get("MindSpore:reference")),
            "probes": [p for label, run in watch.runs.items() if label.startswith("torch:probe")
                       for p in [only(run)] if p is not None]}


def locate(watch: Watch, judged, note: str = "", memory: bool = False) -> Localisation:
    """The first divergences in ``judged`` (compare_results over paired_runs): the first failing output in torch's
    order of completion, the first failing input gradient in the order torch's backward reached it; with
    ``memory``, where MindSpore keeps more for backward (locate_memory)."""
    order = [r.name for r in judged.rows]      # torch's order of recording: forward, then backward
    calls: dict[str, int] = {}
    for n in order:
        path, call, _ = split_name(n)
        calls[path] = max(calls.get(path, 0), call + 1)

    failed_calls = {split_name(r.name)[:2] for r in judged.rows if r.kind == "output" and not r.passed}

    def first(kind: str, direction: str) -> Divergence | None:
        for row in judged.rows:
            if row.kind == kind and not row.passed:
                path, call, _ = split_name(row.name)
                return Divergence(direction, path, watch.ms_paths.get(path, path), call, calls[path],
                                  watch.classes["torch"].get(path, "?"), watch.classes["mindspore"].get(path, "?"), row,
                                  after_forward=kind == "input-grad" and (path, call) in failed_calls)
        return None

    found = Localisation(first("output", "forward"), first("input-grad", "backward"), len(order), len(calls), note,
                         locate_memory(watch) if memory else None, uncalled=uncalled(watch))
    found.tree = module_tree(watch, judged, found)
    return found


def uncalled(watch: Watch) -> list[str]:
    """The paired modules holding parameters of their own that torch's run calls and MindSpore's never does, in
    torch's order: a port that uses a layer's weights without calling it (a bias it leaves out), or not at all."""
    expected, actual = watch.runs.get("torch"), watch.runs.get("mindspore")
    if expected is None or actual is None:
        return []
    called = {split_name(n)[0] for n in actual.tensors}
    paths = dict.fromkeys(split_name(n)[0] for n in expected.names("output"))
    return [p for p in paths if p in watch.holding and p in watch.classes["mindspore"] and p not in called]


def module_tree(watch: Watch, judged, found: Localisation) -> list[dict]:
    """The torch model's modules in definition order, each with its depth, class pair and verdicts ("agree",
    "differ", None where not judged) for its outputs and its input gradients, and ``first`` naming the
    divergence it is ("forward", "backward", "memory"): for the HTML report."""
    verdicts: dict[str, dict[str, bool]] = {}
    for row in judged.rows:
        path = split_name(row.name)[0]
        what = "output" if row.kind == "output" else "grad"
        mine = verdicts.setdefault(path, {})
        mine[what] = mine.get(what, True) and row.passed
    firsts: dict[str, str] = {}
    for name, d in (("forward", found.forward), ("backward", found.backward), ("memory", found.memory)):
        if d is not None:
            firsts.setdefault(d.torch_path, name)
    shown = set(verdicts) | set(firsts)
    tree = []
    for path, torch_class in watch.classes["torch"].items():
        if not any(p == path or not path or p.startswith(path + ".") for p in shown):
            continue            # neither judged nor holding anything judged
        mine = verdicts.get(path, {})
        tree.append({"path": path or ROOT, "depth": path.count(".") + 1 if path else 0, "torch_class": torch_class,
                     "mindspore_class": watch.classes["mindspore"].get(path, ""),
                     "output": _verdict(mine.get("output")), "grad": _verdict(mine.get("grad")),
                     "first": firsts.get(path, "")})
    return tree


def _verdict(passed: bool | None) -> str | None:
    return None if passed is None else "agree" if passed else "differ"
