"""``recompat demo``: the whole job on the embedded example project (examples/).

1. Translate examples/ into DIR (whole-model scope by default), keeping each changed file's diff for the report.
2. For each example model of examples/train.py (``EXAMPLES``): build the torch model with checkpointing on, and its
   twin with the same builder from the translated copy of tinynets (the builders take the package as a parameter, so
   there is one table of the examples); transfer the torch weights, run one forward and one backward on each side on
   the example's batch (dropout 0) and judge outputs, input gradients, parameter gradients, the buffers after the
   step (BatchNorm running statistics) and the paired layers' settings: by the round-off rule against a float64
   run of the torch model (compat.compare), or by --rtol/--atol when given. Then both train TRAIN_STEPS steps
   (compat.training.compare_training: the same weights, one example batch per step, SGD on the mean squared error,
   MindSpore's optimizer and loss from mappings/training.yaml), judged after each step.
3. Write DIR/report.json and DIR/report.html (rendered by recompat.reports.html), print a table and where the report is.

A model runs only where the translation's verdict on its class (translator/verdicts.py, --scope model) is not "will
not run": something it builds or runs still holds torch code, and torch compared with itself proves nothing. With
--scope checkpoint, which gives no verdicts, every project file it is built from must have translated without a
manual site. A model that fails to import,
build, transfer or run is reported with the first line of the error and the file:line it came from, and the demo goes
on with the others. Both packages are imported under unique names and removed from sys.modules afterwards, so neither
shadows the other nor anything of the caller's.
"""
from __future__ import annotations

import ast
import importlib
import importlib.util
import inspect
import json
import os
import platform
import sys
import time
import traceback
import types
import uuid
import warnings
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import IO

from recompat.constants import DEFAULT_STYLE, DEMO_ATOL, DEMO_RTOL, TRAINING_PARTED

JUDGED = ("output", "input-grad", "param-grad", "buffer", "setting", "memory", "training")    # what must agree
STATUSES = ("agree", "mismatch", "failed", "not-translated")
SEED = 0
MS_MODE = "pynative"        # the MindSpore mode every model runs in
DROPOUT = 0.0               # every model is built without dropout: the two frameworks draw different masks
TRAIN_STEPS = 20            # then both sides train this many steps (compare_training; --train-steps)
TRAIN_LR = 0.1              # plain SGD on the mean squared error, as examples/train.py trains


class DemoError(Exception):
    """Bad input for the demo (exit 2); the message names the file or folder and says what to do."""


@dataclass
class Settings:
    """What `recompat demo` does; the defaults here are the command's (recompat.cli reads them for --help)."""
    src: Path                   # the example project
    dest: Path                  # where the translation and the report go
    style: str = DEFAULT_STYLE
    scope: str = "model"
    jobs: int = 1
    models: list[str] | None = None   # None: every example
    diff: bool = False          # also print the unified diff to stdout
    verbose: bool = False       # the translator's per-site lines on stderr
    run: bool = True            # False: translate and report only (no torch, no MindSpore)
    rtol: float | None = None   # None: the round-off rule against float64 (DEMO_RTOL/ATOL where a model cannot
    atol: float | None = None   # run in float64: the reason is at their definition)
    train_steps: int = TRAIN_STEPS   # training steps per model after the one-step check; 0: none


def verdict(settings: Settings) -> str:
    """How the models are judged, in words."""
    if settings.rtol is None and settings.atol is None:
        return "the round-off rule against a float64 run of the torch model"
    rtol = DEMO_RTOL if settings.rtol is None else settings.rtol
    atol = DEMO_ATOL if settings.atol is None else settings.atol
    return f"rtol {rtol:g}, atol {atol:g}"


@dataclass
class ModelResult:
    name: str
    form: str                   # how the model calls checkpointing (train.py's Example.form)
    files: list[str] = field(default_factory=list)   # the project files it is built from, relative to examples/
    status: str = "not-translated"                    # one of STATUSES
    reason: str = ""
    translated: bool = False    # every file it is built from translated without a manual site
    manual: int = 0             # manual sites left in those files
    ran: bool = False           # both sides ran forward and backward
    stage: str = ""             # where it failed: torch, import, build, transfer, run
    errors: dict = field(default_factory=dict)       # kind -> {max_abs_err, passed, failed, total, worst}
    verdict: str = ""                                # how it was judged, where not as the settings say
    memory: dict = field(default_factory=dict)       # framework -> {recompute, plain}: bytes kept for backward
    buffers: dict = field(default_factory=dict)      # {total, differ: [names]}: BatchNorm statistics after the step
    warnings: list[str] = field(default_factory=list)
    seconds: float = 0.0
    compare: dict | None = None                      # CompareReport.to_dict()
    training: dict | None = None                     # TRAIN_STEPS steps: losses, divergence, first failure


def _say(stderr: IO[str], text: str) -> None:
    print(f"recompat: {text}", file=stderr, flush=True)


def _shown(path: Path | str) -> str:
    """A path as the user should read it: relative to the working folder when it is below it."""
    rel = os.path.relpath(path)
    return rel if not rel.startswith("..") else str(path)


def check_output(src: Path, dest: Path) -> None:
    """DemoError unless ``dest`` can hold the translated copy and the report."""
    if dest.exists() and not dest.is_dir():
        raise DemoError(f"-o {dest}: exists and is not a folder — name a folder for the translated project "
                        "and the report")
    s, d = src.resolve(), dest.resolve()
    if d == s or s in d.parents:
        raise DemoError(f"-o {dest}: is inside the example project {src} — the translation would be written into "
                        "its own input; name a folder outside it (default: out/demo)")
    try:
        dest.mkdir(parents=True, exist_ok=True)
    except OSError as exc:
        raise DemoError(f"-o {dest}: cannot create it ({exc.strerror or exc}) — name a folder you can write") from None
    if not os.access(dest, os.W_OK | os.X_OK):
        raise DemoError(f"-o {dest}: cannot write into it — name a folder you can write")


# --------------------------------------------------------------------------------------------- importing

def _load_package(folder: Path, tag: str, run_init: bool = True) -> str:
    """Import ``folder`` as a package under a unique name; returns the name. ``run_init=False`` registers the package
    without running its __init__.py, so that each module is imported on its own (one broken file fails only the
    models built from it)."""
    name = f"_recompat_demo_{tag}_{uuid.uuid4().hex[:8]}"
    if run_init:
        spec = importlib.util.spec_from_file_location(name, folder / "__init__.py",
                                                      submodule_search_locations=[str(folder)])
        module = importlib.util.module_from_spec(spec)
        sys.modules[name] = module
        spec.loader.exec_module(module)
    else:
        module = types.ModuleType(name)
        module.__path__ = [str(folder)]
        sys.modules[name] = module
    return name


def _unload(prefix: str) -> None:
    for name in [n for n in sys.modules if n == prefix or n.startswith(prefix + ".")]:
        del sys.modules[name]


class _ImportFailed(Exception):
    """A translated module did not import; the cause is chained."""


class Translated:
    """The translated tinynets, name by name, for train.py's builders: each name comes from the translated twin of the
    torch file that defines it (the torch package tells which file that is)."""

    def __init__(self, torch_nets: types.ModuleType, package: str):
        self._torch_nets, self._package = torch_nets, package

    def __getattr__(self, name: str):
        origin = getattr(self._torch_nets, name).__module__.rsplit(".", 1)[-1]
        try:
            module = importlib.import_module(f"{self._package}.{origin}")
        except Exception as exc:
            raise _ImportFailed(f"tinynets/{origin}.py does not import") from exc
        return getattr(module, name)


def project_files(model, src: Path) -> list[str]:
    """The files of the example project (relative to ``src``) that a torch model is built from: those defining its
    module classes, and the project files they import (the mixer's checkpoint wrapper lives in utils.py)."""
    root = src.resolve()
    found: set[Path] = set()
    for m in model.modules():
        try:
            f = Path(inspect.getsourcefile(type(m)) or "").resolve()
        except TypeError:
            continue
        if root in f.parents:
            found.add(f)
    todo = list(found)
    while todo:
        path = todo.pop()
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if not (isinstance(node, ast.ImportFrom) and node.level):
                continue
            base = path.parent
            for _ in range(node.level - 1):
                base = base.parent
            stems = [node.module] if node.module else [a.name for a in node.names]
            for stem in stems:
                f = (base / (stem.replace(".", "/") + ".py")).resolve()
                if f.is_file() and root in f.parents and f not in found:
                    found.add(f)
                    todo.append(f)
    return sorted(str(f.relative_to(root)).replace(os.sep, "/") for f in found)


# --------------------------------------------------------------------------------------------- errors

def reason(exc: BaseException, roots: list[Path]) -> str:
    """``file:line: Error: first line``: the place is the innermost frame in ``roots`` (the translated project, then
    the examples), else the innermost frame."""
    while isinstance(exc, _ImportFailed) and exc.__cause__ is not None:
        exc = exc.__cause__
    lines = str(exc).strip().splitlines()
    text = f"{type(exc).__name__}: {lines[0]}" if lines else type(exc).__name__
    where = getattr(exc, "where", None)       # set where the error is raised here, about a file of the project
    if where is None and isinstance(exc, SyntaxError) and exc.filename:
        where = (exc.filename, exc.lineno)
    if where is None:
        frames = traceback.extract_tb(exc.__traceback__)
        resolved = [r.resolve() for r in roots]
        for root in resolved:
            mine = [f for f in frames if root in Path(f.filename).resolve().parents]
            if mine:
                where = (mine[-1].filename, mine[-1].lineno)
                break
        if where is None and frames:
            where = (frames[-1].filename, frames[-1].lineno)
    return f"{_shown(where[0])}:{where[1]}: {text}" if where else text


# --------------------------------------------------------------------------------------------- one model

def _in_project(path, src: Path) -> str | None:
    """`path` as a project file relative to src (with /), or None where it is outside the project."""
    root, path = src.resolve(), Path(path).resolve()
    return str(path.relative_to(root)).replace(os.sep, "/") if root in path.parents else None


def _manual_sites(translation: dict, src: Path) -> dict[str, list[str]]:
    """Project file (relative to src) -> what keeps it from being translated: its manual sites, or its error."""
    out: dict[str, list[tuple]] = {}
    for f in translation["files"]:
        rel = _in_project(f["path"], src)
        if rel is None:
            continue
        if f.get("error"):
            out.setdefault(rel, []).append((0, 0, f"{f['path']}: {f['error']}"))
        for s in f.get("sites", ()):
            if s["status"] == "manual":
                d = next((d for d in s["diagnostics"] if d["status"] == "manual"), None)
                what = f"{d['code']} {d['message']}" if d else s["api"]
                out.setdefault(rel, []).append((s["line"], s["col"], f"{s['path']}:{s['line']}:{s['col']}: {what}"))
    return {rel: [text for *_, text in sorted(found, key=lambda x: x[:2])] for rel, found in out.items()}


def _class_verdicts(translation: dict, src: Path) -> dict[tuple[str, str], dict]:
    """(project file relative to src, class name) -> the translation's verdict on that model class."""
    return {(rel, v["cls"].rpartition(".")[2]): v for v in translation.get("classes", ())
            if (rel := _in_project(v["path"], src)) is not None}


def _torch_model(example, train):
    """The example's torch model as the demo runs it: seeded, checkpointing on, in training mode."""
    import torch

    torch.manual_seed(SEED)
    return example.build(train.tinynets, True, DROPOUT).train()


def _translated_model(example, translated):
    """The same model built from the translation, seeded (check_model checks it is a Cell before it trains it)."""
    import mindspore

    mindspore.set_seed(SEED)
    return example.build(translated, True, DROPOUT)


def _localised(example, train, translated, inputs, report, **run) -> dict:
    """Where a mismatching model's two runs first part (compat.compare.localise_pair), on the pair built again as
    check_model builds it. The verdict stands without it: a rerun that raises says why, never raises."""
    from recompat.compat.compare import localise_pair

    try:
        tmodel, cell = _torch_model(example, train), _translated_model(example, translated)
        cell.set_train(True)
        memory = any(r.kind == "memory" and not r.passed for r in report.rows)
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            return localise_pair(tmodel, cell, inputs, ms_mode=MS_MODE, seed=SEED, memory=memory, **run).as_json()
    except Exception as err:
        why = f"localisation did not run: the watched rerun raised {type(err).__name__}: {err}"
        return {"skipped": why, "lines": [why]}


def _where(report) -> str:
    """The localisation's findings, for a mismatch's reason ("" where it found nothing or did not run)."""
    lines = (report.meta.get("localisation") or {}).get("lines", [])
    found = [line for line in lines if line.startswith(("never called", "first divergence", "memory kept"))
             and ": none (" not in line]
    return "; ".join(found)


def _train(example, train, translated, settings: Settings) -> dict:
    """settings.train_steps steps of SGD on the mean squared error on both sides, from the same weights, one batch per step
    (the example's batches for seeds SEED, SEED + 1, ...); the MindSpore optimizer and loss come from
    mappings/training.yaml. What the report shows of it."""
    import torch

    from recompat.compat.training import compare_training

    tmodel, cell = _torch_model(example, train), _translated_model(example, translated)
    batches = []
    for k in range(settings.train_steps):
        inputs, target = example.batch(SEED + k)
        batches.append((tuple(t.numpy() for t in inputs), target.numpy()))
    report = compare_training(tmodel, cell, batches, loss=torch.nn.MSELoss(),
                              optimizer=torch.optim.SGD(tmodel.parameters(), lr=TRAIN_LR),
                              rtol=settings.rtol, atol=settings.atol, weights="torch")
    first = report.first_failure
    return {"steps": len(report.steps), "passed": report.passed, "first_failure": first.step if first else None,
            "failed_steps": sum(not s.passed for s in report.steps), "verdict": report.meta["verdict"],
            "loss": report.loss_curves(), "divergence": [s.divergence for s in report.steps],
            "pieces": report.pieces, "setup": [r.message for r in report.setup if not r.passed],
            "torch_far_from": report.torch_far_from, "parted_at": report.parted_at,
            "message": "; ".join(f"{r.name}: {r.message}" for r in (first.rows if first else ()) if not r.passed)}


def check_model(example, train, translated: Translated, settings: Settings, blocked: dict[str, list[str]],
                verdicts: dict[tuple[str, str], dict] | None = None) -> ModelResult:
    """Build, transfer, run and compare one example model; never raises for a model's own failure. `blocked`: what
    keeps each project file from being translated; `verdicts`: the translation's verdict per model class, which
    decides where it has one (_class_verdicts)."""
    import mindspore
    import torch

    from recompat.compat.compare import judge_pair, run_pair, wants_reference
    from recompat.compat.weights import WeightTransferError

    start = time.perf_counter()
    res = ModelResult(example.name, example.form, verdict=verdict(settings))
    roots = [settings.dest, settings.src]
    stage = "torch"
    try:
        tmodel = _torch_model(example, train)
        inputs = [t.numpy() for t in example.batch(SEED)[0]]
        res.files = project_files(tmodel, settings.src)
        left = [(rel, why) for rel in res.files for why in blocked.get(rel, ())]   # in file and line order
        res.manual = len(left)
        place = _in_project(inspect.getsourcefile(type(tmodel)) or "", settings.src)
        judged = (verdicts or {}).get((place, type(tmodel).__name__))
        if judged is not None and judged["verdict"] == "will not run":
            res.reason = f"{type(tmodel).__name__} will not run ({judged['at']}): {judged['reason']}"
            return res
        if judged is None and left:
            n = len(left)
            res.reason = (f"{n} manual site{'s' if n != 1 else ''} left in "
                          f"{', '.join(sorted({rel for rel, _ in left}))}; first: {left[0][1]}")
            return res
        res.translated = True
        stage = "build"
        cell = _translated_model(example, translated)
        if not isinstance(cell, mindspore.nn.Cell):
            kind = "a torch.nn.Module" if isinstance(cell, torch.nn.Module) else f"a {type(cell).__qualname__}"
            exc = TypeError(f"the translated {type(cell).__name__} is {kind}, not a MindSpore Cell: its file still "
                            "builds a torch model (was it translated with --scope checkpoint?)")
            exc.where = (inspect.getsourcefile(type(cell)), inspect.getsourcelines(type(cell))[1])
            raise exc
        cell.set_train(True)
        stage = "run"
        reference = wants_reference("auto", settings.rtol, settings.atol)
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")     # torch's use_reentrant notice: two examples leave it out on purpose
            runs = run_pair(tmodel, cell, inputs, ms_mode=MS_MODE, seed=SEED, reference=reference, memory=True)
            res.warnings = list(runs.transfer.warnings)
            res.ran = True
            stage = "memory"
            plain = runs.kept_without or {}    # run_pair measures it with every checkpoint and mark off
            res.memory = {f: {"recompute": runs.kept[f], "plain": plain.get(f)} for f in runs.kept}
        stage = "compare"
        tolerance = {"rtol": DEMO_RTOL if settings.rtol is None else settings.rtol,
                     "atol": DEMO_ATOL if settings.atol is None else settings.atol}
        report = judge_pair(runs, **tolerance)
        if not report.passed:
            report.meta["localisation"] = _localised(example, train, translated, inputs, report,
                                                     reference=reference, **tolerance)
        if reference and runs.reference is None:
            res.verdict = f"rtol {DEMO_RTOL:g}, atol {DEMO_ATOL:g}: {runs.no_reference}"
        if settings.train_steps:
            stage = "training"
            with warnings.catch_warnings():
                warnings.simplefilter("ignore")
                res.training = _train(example, train, translated, settings)
    except Exception as exc:
        res.status = "failed"
        res.stage = ("import" if isinstance(exc, _ImportFailed) else "transfer" if isinstance(exc, WeightTransferError)
                     else stage)
        res.reason = f"{res.stage}: {reason(exc, roots)}"
        return res
    finally:
        res.seconds = round(time.perf_counter() - start, 3)

    judged = [r for r in report.rows if r.kind in JUDGED]
    for kind in JUDGED:
        rows = [r for r in judged if r.kind == kind]
        if not rows:
            continue
        errs = [r for r in rows if r.max_abs_err is not None]
        worst = max(errs, key=lambda r: r.max_abs_err) if errs else None
        res.errors[kind] = {"max_abs_err": worst.max_abs_err if worst else None, "worst": worst.name if worst else "",
                            "passed": all(r.passed for r in rows), "failed": sum(not r.passed for r in rows),
                            "total": len(rows)}
    t = res.training or {"passed": True}
    if res.training:
        res.errors["training"] = {"max_abs_err": max(t["divergence"], default=None),
                                  "worst": t["first_failure"] or "", "passed": t["passed"],
                                  "failed": t["failed_steps"], "total": t["steps"]}
    buffers = [r for r in report.rows if r.kind == "buffer"]
    res.buffers = {"total": len(buffers), "differ": [r.name for r in buffers if not r.passed]}
    failed = [r for r in judged if not r.passed]
    res.compare = report.to_dict()
    if judged and not failed and t["passed"]:
        res.status = "agree"
        return res
    res.status = "mismatch"
    if not judged:
        res.reason = "nothing was compared: neither side produced an output or a gradient"
    elif not failed:
        res.reason = (f"one step agrees, but training does not: {t['failed_steps']} of {t['steps']} steps leave the "
                      f"tolerance ({t['verdict']}), the first at step {t['first_failure']}: {t['message']}")
    else:
        # a setting that differs is the likeliest cause of the rest, and says what to change: it comes first
        worst = max(failed, key=lambda r: (r.kind == "setting", -1 if r.max_abs_err is None else r.max_abs_err))
        res.reason = (f"{len(failed)} of {len(judged)} judged tensors and settings fail ({res.verdict}); "
                      f"e.g. {worst.name}: {worst.message}")
        where = _where(report)
        res.reason += f"; {where}" if where else ""
    return res


# --------------------------------------------------------------------------------------------- the pipeline

def _apis(translation: dict) -> list[dict]:
    """Per source API: occurrences and how they went, the most manual first."""
    table: dict[str, dict] = {}
    for f in translation["files"]:
        for s in f.get("sites", ()):
            row = table.setdefault(s["api"], {"api": s["api"], "occurrences": 0, "converted": 0, "partial": 0,
                                              "manual": 0})
            row["occurrences"] += 1
            row[s["status"]] += 1
    return sorted(table.values(), key=lambda r: (-r["manual"], -r["occurrences"], r["api"]))


def _versions() -> dict:
    out = {"python": platform.python_version()}
    for name in ("torch", "mindspore", "numpy"):
        mod = sys.modules.get(name)
        if mod is not None:
            out[name] = getattr(mod, "__version__", "?")
    return out


def run(settings: Settings, *, stdout: IO[str] | None = None, stderr: IO[str] | None = None) -> int:
    """The demo; 0 when the pipeline ran (whatever the models did), 2 on bad input (DemoError is turned into 2)."""
    stdout = sys.stdout if stdout is None else stdout
    stderr = sys.stderr if stderr is None else stderr
    try:
        return _run(settings, stdout, stderr)
    except DemoError as exc:
        print(f"recompat: error: {exc}", file=stderr)
        return 2


def _run(settings: Settings, stdout: IO[str], stderr: IO[str]) -> int:
    from recompat import __version__
    from recompat.reports import ReportError, html, runs, write_atomic
    from recompat.translator import engine

    src, dest = settings.src, settings.dest
    if settings.run and not (src / "train.py").is_file():
        raise DemoError(f"{src / 'train.py'}: missing — the demo builds each model the way examples/train.py does; "
                        "restore it, or give --no-run to translate and report only")
    check_output(src, dest)
    started = time.perf_counter()
    steps = 3 if settings.run else 2
    prefixes: list[str] = []
    saved_bytecode = sys.dont_write_bytecode
    sys.dont_write_bytecode = True      # no __pycache__ in examples/ or in the translated copy
    try:
        chosen, train = [], None
        if settings.run:
            _say(stderr, f"loading torch and the example project ({_shown(src / 'train.py')}) ...")
            prefixes.append(_load_package(src, "torch"))
            train = importlib.import_module(f"{prefixes[-1]}.train")
            names = [e.name for e in train.EXAMPLES]
            unknown = [n for n in settings.models or () if n not in names]
            if unknown:
                raise DemoError(f"--model {', '.join(unknown)}: no such example model in {_shown(src / 'train.py')} — "
                                f"choose from {', '.join(names)}")
            chosen = [e for e in train.EXAMPLES if not settings.models or e.name in settings.models]

        _say(stderr, f"[1/{steps}] translating {_shown(src)}/ into {_shown(dest)}/ (scope {settings.scope}, "
                     f"style {settings.style}) ...")
        opts = engine.Options(paths=[_shown(src)], to="mindspore", style=settings.style, scope=settings.scope,
                              output=str(dest), diff=settings.diff, jobs=settings.jobs, quiet=not settings.verbose)
        try:
            translation = runs.translation_doc(opts, stdout=stdout, stderr=stderr)
        except engine.UsageError as exc:
            raise DemoError(str(exc)) from None

        results: list[ModelResult] = []
        if settings.run:
            _say(stderr, f"[2/{steps}] running {len(chosen)} example model{'s' if len(chosen) != 1 else ''}: torch "
                         "with checkpointing vs its translation, same weights and batch ...")
            blocked = _manual_sites(translation, src)
            importlib.import_module("mindspore")    # loaded before the first model, so that its time is not charged to one

            prefixes.append(_load_package(dest / "tinynets", "mindspore", run_init=False))
            translated = Translated(train.tinynets, prefixes[-1])
            for example in chosen:
                r = check_model(example, train, translated, settings, blocked, _class_verdicts(translation, src))
                results.append(r)
                _say(stderr, f"  {r.name}: {_verdict(r)} ({r.seconds:.1f} s)")

        doc = {"kind": "recompat-demo", "tool": "recompat", "version": __version__,
               "source": _shown(src), "output": _shown(dest),
               "settings": {"scope": settings.scope, "style": settings.style, "rtol": settings.rtol,
                            "atol": settings.atol, "verdict": verdict(settings), "judged": list(JUDGED),
                            "seed": SEED, "dropout": DROPOUT, "ms_mode": MS_MODE,
                            "train_steps": settings.train_steps if settings.run else 0,
                            "run": settings.run, "models": settings.models},
               "versions": _versions(), "seconds": round(time.perf_counter() - started, 2),
               "totals": _totals(results, translation), "apis": _apis(translation),
               "models": [asdict(r) for r in results], "translation": translation}
        _say(stderr, f"[{steps}/{steps}] writing the report ...")
        page, beside = dest / "report.html", dest / "report.json"
        try:
            write_atomic(beside, json.dumps(doc, indent=1, ensure_ascii=False, default=str) + "\n")
            html.write(doc, page, source=beside.name)
        except ReportError as exc:
            raise DemoError(str(exc)) from None
    finally:
        sys.dont_write_bytecode = saved_bytecode
        for prefix in prefixes:
            _unload(prefix)
    print_summary(doc, page, beside, stdout)
    return 0


def _totals(results: list[ModelResult], translation: dict) -> dict:
    s = translation["summary"]
    return {"models": len(results), "translated": sum(r.translated for r in results),
            "ran": sum(r.ran for r in results), **{k: sum(r.status == k for r in results) for k in STATUSES},
            "files": s["files_scanned"], "files_failed": s["files_failed"], "sites": s["sites"],
            "conversion_rate": s["conversion_rate"]}


# --------------------------------------------------------------------------------------------- stdout

def _verdict(r: ModelResult) -> str:
    """One short line per model for the progress output; the table and the report say more."""
    if r.status == "agree":
        worst = max((e["max_abs_err"] or 0.0 for k, e in r.errors.items() if k != "training"), default=0.0)
        trained = f", {r.training['steps']} training steps" if r.training else ""
        return f"agree (largest abs error {worst:.2g}{trained})"
    if r.status == "mismatch":
        return "MISMATCH: " + r.reason.split(";", 1)[0]
    if r.status == "failed":
        return r.reason
    return f"not translated ({r.manual} manual site{'s' if r.manual != 1 else ''} left)"


def _cell(errors: dict, kind: str) -> str:
    e = errors.get(kind)
    if not e:
        return "-"
    err = "-" if e["max_abs_err"] is None else f"{e['max_abs_err']:.1e}"
    return f"{'ok' if e['passed'] else 'FAIL'} {err}"


def table(doc: dict) -> str:
    """The models as a plain-text table, one line each."""
    header = ("model", "translated", "ran", "output", "input grad", "param grad", "buffers", "settings", "memory",
              "training", "result")
    lines = [header]
    for r in doc["models"]:
        if r["translated"]:
            tr = "yes"
        else:
            tr = f"no ({r['manual']} manual)" if r["manual"] else "no"
        lines.append((r["name"], tr, "yes" if r["ran"] else "no", *(_cell(r["errors"], k) for k in JUDGED),
                      r["status"] + (f" ({r['stage']})" if r["status"] == "failed" else "")))
    widths = [max(len(line[i]) for line in lines) for i in range(len(header))]
    return "\n".join("  ".join(c.ljust(w) for c, w in zip(line, widths)).rstrip() for line in lines)


def print_summary(doc: dict, page: Path, beside: Path, out: IO[str]) -> None:
    t = doc["totals"]
    sites = t["sites"]
    rate = t["conversion_rate"]
    print(f"translation: {t['files']} files, {sites['total']} API occurrences: {sites['converted']} converted, "
          f"{sites['partial']} partial, {sites['manual']} manual; conversion rate "
          f"{'n/a' if rate is None else f'{100 * rate:.1f}%'} (by occurrence)"
          + (f"; {t['files_failed']} files could not be processed" if t["files_failed"] else ""), file=out)
    manual = [a for a in doc["apis"] if a["manual"]]
    if manual:
        print("most left by hand: " + ", ".join(f"{a['api']} ({a['manual']})" for a in manual[:5])
              + (f", and {len(manual) - 5} more APIs" if len(manual) > 5 else ""), file=out)
    if doc["models"]:
        print(file=out)
        print(table(doc), file=out)
        for r in doc["models"]:
            if r["status"] != "agree":
                text = f"  {r['name']}: {r['reason']}"
                print(text if len(text) <= 200 else text[:197] + "...", file=out)
            elif (r.get("training") or {}).get("parted_at"):
                print(f"  {r['name']}: {TRAINING_PARTED.format(step=r['training']['parted_at'])}", file=out)
            elif (r.get("training") or {}).get("torch_far_from"):
                print(f"  {r['name']}: from training step {r['training']['torch_far_from']}, torch's own float32 "
                      "leaves the float64 run and MindSpore stays nearer it: the divergence is torch's", file=out)
        print(f"\nmodels: {t['models']}, translated {t['translated']}, ran {t['ran']}, agree {t['agree']}, "
              f"mismatch {t['mismatch']}, failed {t['failed']}, not yet translatable {t['not-translated']} "
              f"(outputs, input and parameter gradients, buffers, layer settings, the memory recompute saves and "
              f"{doc['settings']['train_steps']} training steps vs torch, by "
              f"{doc['settings']['verdict']})", file=out)
        if t["not-translated"]:
            one = t["not-translated"] == 1
            print(f"{t['not-translated']} model{' is' if one else 's are'} not yet convertible: the translation says "
                  f"{'it' if one else 'each'} will not run (a manual site in what it builds or runs: an API outside "
                  "the core set, or a mapping without a passing paired example); the report lists each one", file=out)
    print(f"report: {_shown(page)} (its JSON: {_shown(beside)})", file=out)
