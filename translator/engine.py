"""The run over paths: collect files, translate each, write or report, summarise.

``translate_bytes`` (the per-file core) is a pure function; everything with side effects lives
here: walking the trees, reading, the process pool, atomic writes, diffs, the summary and the
JSON report. The CLI (``recompat.cli``) only parses arguments into :class:`Options` and calls
:func:`run`.

Stable order: files are processed and reported in sorted path order whatever ``jobs`` is, so a
``-j 1`` and a ``-j 8`` run print and write the same thing.
"""
from __future__ import annotations

import ast
import contextlib
import difflib
import errno
import fnmatch
import functools
import gc
import io
import json
import os
import stat
import sys
import time
import tokenize
from dataclasses import asdict, dataclass, field
from typing import IO, Callable, Iterable, Iterator

from recompat._files import write_atomic
from recompat.constants import DEFAULT_STYLE, OTHER
from recompat.translator import names, notebooks, project, verdicts
# The trigger words (a file without its direction's word has nothing to translate and is passed
# over unread by the parser) live in one place, beside translate_bytes, which applies them too.
from recompat.translator.translate import DIRECTIONS as TARGETS
from recompat.translator.translate import MODEL_TRIGGERS, SCOPES, STYLES, translate_bytes, trigger
from recompat.translator.results import STATUSES, FileResult, TranslateError

# Directories never walked into (below a given root; a root named explicitly is always walked).
SKIP_DIRS = frozenset({".git", "__pycache__", ".venv", "venv", "node_modules", ".tox", ".ipynb_checkpoints"})
SOURCE_SUFFIXES = (".py", ".ipynb")     # what is translated (a notebook's code cells: translator/notebooks.py)

# Work sent to worker processes (-j N): at most _MAX_CHUNK files per task, about
# _TASKS_PER_WORKER tasks per worker. With -j 0, one worker per CPU, but no more than the source has
# _BYTES_PER_WORKER: a worker starts in about 20 ms, the time of translating some 40 KB, so a small tree stays in
# one process.
_MAX_CHUNK = 64
_TASKS_PER_WORKER = 8
_BYTES_PER_WORKER = 128 * 1024


class UsageError(Exception):
    """Options that cannot work together; the CLI prints it and exits 2 before touching a file."""


@dataclass
class Options:
    paths: list[str]
    to: str = "mindspore"
    style: str | None = None       # None: DEFAULT_STYLE (--to mindspore only)
    scope: str = "checkpoint"      # or "model": whole model files (the core API set too)
    output: str | None = None      # -o DIR: mirror the tree there
    in_place: bool = False
    diff: bool = False             # unified diff to stdout (may go with output, as the demo does)
    check: bool = False
    json_path: str | None = None   # "-" for stdout
    jobs: int = 1                  # 0: one per CPU, on a tree large enough to gain (_results)
    exclude: list[str] = field(default_factory=list)
    quiet: bool = False
    clear_outputs: bool = False    # notebooks: the translated ones' outputs and execution counts cleared

    @property
    def mode(self) -> str:
        if self.in_place:
            return "in-place"
        if self.output is not None:
            return "output"
        if self.check:
            return "check"
        if self.diff:
            return "diff"
        return "report"


@dataclass
class Summary:
    files_scanned: int = 0       # .py files looked at
    files_examined: int = 0    # files that went through translate_bytes (contain the trigger word)
    files_changed: int = 0       # files whose translation differs from the input
    files_failed: int = 0        # files (or paths) that could not be processed
    files_written: int = 0       # translated files written (-o, --in-place)
    files_copied: int = 0        # unchanged files copied (-o)
    files_up_to_date: int = 0    # -o: destination already held exactly these bytes, not rewritten
    lines: int = 0               # lines in the scanned .py files
    sites: dict = field(default_factory=lambda: {s: 0 for s in reversed(STATUSES)})
    classes: dict = field(default_factory=dict)   # --scope model: model classes that will run / will not
    elapsed_s: float = 0.0

    @property
    def total_sites(self) -> int:
        return sum(self.sites.values())

    @property
    def conversion_rate(self) -> float | None:
        n = self.total_sites
        return self.sites["converted"] / n if n else None

    @property
    def rewritten_rate(self) -> float | None:
        n = self.total_sites
        return (self.sites["converted"] + self.sites["partial"]) / n if n else None

    @property
    def lines_per_s(self) -> float | None:
        return self.lines / self.elapsed_s if self.elapsed_s > 0 else None

    def to_dict(self) -> dict:
        d = asdict(self)
        d["sites"] = dict(self.sites, total=self.total_sites)
        d["conversion_rate"] = self.conversion_rate
        d["rewritten_rate"] = self.rewritten_rate
        d["lines_per_s"] = self.lines_per_s
        return d


@dataclass
class Report:
    results: list[FileResult]     # every scanned file and every failed path, in order
    summary: Summary
    exit_code: int
    classes: list = field(default_factory=list)   # --scope model: a verdicts.ClassVerdict per model class


# --------------------------------------------------------------------------------------------
# Collecting files


@dataclass
class _Entry:
    display: str    # the path as the user sees it (input path joined with the relative path)
    abspath: str
    rel: str        # relative to the common base of all inputs: where it goes under -o DIR
    is_py: bool


def _excluded(rel: str, name: str, patterns: list[str]) -> bool:
    return any(fnmatch.fnmatch(rel, p) or fnmatch.fnmatch(name, p) for p in patterns)


def _collect(opts: Options, errors: list[FileResult], notices: list[str] | None = None) -> list[_Entry]:
    """Every file to look at, sorted; bad input paths go to ``errors``, warnings to ``notices``."""
    notices = [] if notices is None else notices
    want_all = opts.output is not None   # -o mirrors non-Python files too
    out_real = os.path.realpath(opts.output) if opts.output is not None else None
    roots: list[tuple[str, str, bool]] = []   # (display, abspath, is_dir)
    for p in opts.paths:
        if not os.path.lexists(p):
            errors.append(FileResult(p, error=f"{p}: no such file or directory — check the path"))
        elif not os.path.exists(p):
            errors.append(FileResult(p, error=f"{p}: {_broken_link(p)} — fix or remove the link"))
        else:
            roots.append((p, os.path.abspath(p), os.path.isdir(p)))
    if not roots:
        return []
    base = os.path.commonpath([a if is_dir else os.path.dirname(a) for _, a, is_dir in roots])

    found: dict[str, _Entry] = {}

    def add(display: str, abspath: str, name: str, rel_to_root: str) -> None:
        is_py = name.endswith(SOURCE_SUFFIXES)
        if not (is_py or want_all) or _excluded(rel_to_root, name, opts.exclude):
            return
        found.setdefault(abspath, _Entry(os.path.normpath(display), abspath,
                                         os.path.relpath(abspath, base), is_py))

    for display, absroot, is_dir in roots:
        if not is_dir:
            name = os.path.basename(absroot)
            if not (name.endswith(SOURCE_SUFFIXES) or want_all):
                notices.append(f"recompat: warning: {display}: not a .py or .ipynb file — skipped")
            add(display, absroot, name, name)
            continue
        for dirpath, dirnames, filenames in os.walk(absroot, onerror=lambda e: errors.append(
                FileResult(e.filename, error=f"{e.filename}: cannot list the directory ({e.strerror})"
                                             " — check its permissions, or --exclude it"))):
            rel_dir = os.path.relpath(dirpath, absroot)
            rel_dir = "" if rel_dir == "." else rel_dir.replace(os.sep, "/") + "/"
            keep = []
            for d in dirnames:
                if d in SKIP_DIRS or _excluded(rel_dir + d, d, opts.exclude):
                    continue
                if out_real is not None and os.path.realpath(os.path.join(dirpath, d)) == out_real:
                    continue   # never walk into the output folder
                if os.path.islink(os.path.join(dirpath, d)):   # it may lead out of the tree, or in a circle
                    notices.append(f"recompat: warning: {os.path.join(display, rel_dir + d)}: a symlinked folder,"
                                   " not followed — pass it as a path of its own to translate it")
                    continue
                keep.append(d)
            dirnames[:] = sorted(keep)
            for f in filenames:
                a = os.path.join(dirpath, f)
                add(os.path.join(display, os.path.relpath(a, absroot)), a, f, rel_dir + f)
    return sorted(found.values(), key=lambda e: e.display)


# --------------------------------------------------------------------------------------------
# Per file (runs in worker processes when jobs > 1)


# What a worker gets for one file: path, bytes, to, (style, scope), holders, model classes of the tree, what its
# star imports of the tree's modules bind (see _translate_all).
_Item = tuple[str, bytes, str, tuple[str, str], tuple[str, ...], frozenset[str], dict[str, dict[str, str]]]


@contextlib.contextmanager
def _collector_paused():
    """Python's cyclic garbage collector paused: a file's syntax trees are many objects that its collections would
    traverse again and again (about a third of the run's time on MONAI's networks) and that reference counting
    frees; the few cycles a file leaves are collected after it, as the collector resumes."""
    was_enabled = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        if was_enabled:
            gc.enable()


def _translate_one(item: _Item) -> FileResult:
    """One file, with the garbage collector paused."""
    with _collector_paused():
        return _translate_file(item)


def _translate_file(item: _Item) -> FileResult:
    path, data, to, (style, scope), holders, models, stars = item
    nul = data.find(b"\0")
    if nul >= 0:   # Python refuses NUL bytes in source; name the line rather than a parser message without one
        line = data.count(b"\n", 0, nul) + 1
        return FileResult(path, error=f"{path}:{line}: contains a NUL byte, so it is not Python source (a binary "
                                      "file, or one saved as UTF-16?) — save it as UTF-8 text, or --exclude it")
    package = _package_of(path)
    try:
        return translate_bytes(data, path, to=to, style=style, holders=holders, scope=scope,
                               package=package, models=models, stars=stars,
                               classes=_classes(path, package) if to == "torch" else None)
    except TranslateError as exc:
        return FileResult(path, error=str(exc))
    except RecursionError:
        return FileResult(path, error=f"{path}: nested too deeply to translate — --exclude it")
    except Exception as exc:  # a bug in the translator: report it, keep going with the other files
        return FileResult(path, error=f"{path}: internal error in the translator ({type(exc).__name__}: {exc})"
                                      " — please report this with the file; --exclude it meanwhile")


# The packages' modules as project.Tree, per top package folder: built in each process on first need (a worker
# reads the modules its files ask about), emptied when a run starts.
_TREES: dict[tuple[str, str], project.Tree] = {}


def _classes(path: str, package: str | None) -> project.Tree | None:
    """The modules of the package `path` belongs to (MindSpore -> torch: what a recompute mark is on)."""
    if not package:
        return None
    from recompat import mappings

    root, top = project.package_root(path, package), package.split(".")[0]
    if (root, top) not in _TREES:
        _TREES[root, top] = project.Tree.on_disk(root, top, mappings.default().frameworks.values())
    return _TREES[root, top]


def _package_of(path: str) -> str | None:
    """The dotted package a file is in, from the folders above it that hold an __init__.py (relative imports
    resolve against it); None for a file outside any package."""
    return _package_at(os.path.dirname(os.path.abspath(path)))


@functools.lru_cache(maxsize=None)   # a folder's files ask in turn; emptied when a run starts
def _package_at(folder: str) -> str | None:
    parts = []
    while os.path.isfile(os.path.join(folder, "__init__.py")):
        folder, name = os.path.split(folder)
        if not name.isidentifier():
            break
        parts.append(name)
    return ".".join(reversed(parts)) or None


def _translate_chunk(items: list[_Item]) -> list[FileResult]:
    return [_translate_one(i) for i in items]


def _results(items: list[_Item], jobs: int,
             done: Callable[[int], None] = lambda k: None) -> Iterator[FileResult]:
    """translate_bytes over ``items``, yielded in their order; ``done(k)`` as item k is finished
    (in the order the work finishes, which with jobs > 1 is not the items' order)."""
    total = sum(len(i[1]) for i in items)
    workers = min(jobs or min(cpus(), total // _BYTES_PER_WORKER), len(items))
    if workers <= 1:
        for k, i in enumerate(items):
            r = _translate_one(i)
            done(k)
            yield r
        return
    from concurrent.futures import ProcessPoolExecutor

    # Chunks: several files per task so that IPC and scheduling do not dominate, and about
    # _TASKS_PER_WORKER tasks per worker so that the work spreads. Files go out largest first
    # (translation time grows with size; one big file sent last would leave the others idle),
    # and come back in the items' order.
    budget = max(1, total // (workers * _TASKS_PER_WORKER))
    chunks: list[list[int]] = []
    size = budget
    for k in sorted(range(len(items)), key=lambda k: -len(items[k][1])):
        if size >= budget or len(chunks[-1]) >= _MAX_CHUNK:
            chunks.append([])
            size = 0
        chunks[-1].append(k)
        size += len(items[k][1])
    with ProcessPoolExecutor(max_workers=workers) as pool:
        where: dict[int, tuple] = {}
        for chunk in chunks:
            fut = pool.submit(_translate_chunk, [items[k] for k in chunk])
            fut.add_done_callback(lambda _f, chunk=chunk: [done(k) for k in chunk])
            for pos, k in enumerate(chunk):
                where[k] = (fut, pos)
        try:
            for k in range(len(items)):
                fut, pos = where.pop(k)
                yield fut.result()[pos]
        finally:
            for fut, _ in where.values():
                fut.cancel()


def _translate_all(todo: list[_Item], others: list[_Entry], jobs: int, results: dict[str, FileResult],
                   originals: dict[str, bytes], lines_of: dict[str, int],
                   out: "_Out") -> tuple[int, tuple[Callable[[str], str], set[str]] | None]:
    """Translate ``todo`` into ``results``, across files; returns how many files were translated and, with
    --scope model, how the tree's names resolve and what its modules define (for translator/verdicts.py).

    A file may assign torch's checkpoint to an attribute (``self._ckpt = partial(checkpoint, ...)``)
    that other files call (``self._ckpt(layer, x)``): the core reports those attribute names as
    ``FileResult.holders``. So: one pass over every file with the trigger word, then the files
    that mention a holder named in any file -- ``others`` (files without the trigger word) too,
    since ``self.ckpt_fn(...)`` need not say "checkpoint" -- are translated again with all the
    holders known, until no new one turns up. A file's final result is its last pass's; the
    order of files never matters, so -j N gives what -j 1 gives.
    """
    out.start_bar(sum(lines_of[i[0]] for i in todo))
    to, style = (todo[0][2], todo[0][3]) if todo else ("", ("", ""))
    known: set[str] = set()
    items = todo
    while items:
        for item, r in zip(items, _results(items, jobs, lambda k, items=items: out.tick(lines_of[items[k][0]]))):
            results[item[0]] = r
        found = {h for i in todo for h in (getattr(results[i[0]], "holders", None) or ())}
        if found <= known:
            break
        known |= found
        needles = [h.encode() for h in sorted(known)]
        holders = tuple(sorted(known))
        items = [(p, d, to, style, holders, m, st) for p, d, _, _, _, m, st in todo if any(n in d for n in needles)]
        for e in list(others):
            try:
                with open(e.abspath, "rb") as f:
                    data = f.read()
            except OSError:
                continue   # read a moment ago; if it is gone now, its first result stands
            if any(n in data for n in needles):
                others.remove(e)
                originals[e.display] = data
                todo.append((e.display, data, to, style, (), frozenset(), {}))
                items.append((e.display, data, to, style, holders, frozenset(), {}))
        out.more(sum(lines_of[i[0]] for i in items))
    tree = None
    if todo and style[1] == "model":
        tree = _with_tree_facts(todo, others, jobs, results, originals, lines_of, out, tuple(sorted(known)))
    return len(todo), tree


def _with_tree_facts(todo: list[_Item], others: list[_Entry], jobs: int, results: dict[str, FileResult],
                     originals: dict[str, bytes], lines_of: dict[str, int], out: "_Out",
                     holders: tuple[str, ...]) -> tuple[Callable[[str], str], set[str]]:
    """--scope model: what a file's names are may be told by other files of the tree.
    - A class may derive from a model class of another file (MONAI's Critic, through Classifier, from
      regressor.py's Regressor).
    - A name may come through `from m import *` (timm's create_act.py reads `nn` from `from .activations import
      *`): it is what m binds it to, and m's translation binds it to the other framework's name, or not at all.
    What each module defines, imports and star-imports is gathered (translator/project.py: the translated files
    report it, the others are read for it). A file whose translation did not know a model class it derives from,
    or whose star imports bind names of the source framework, is translated again knowing them; so is a file
    without the source framework's name whose star imports bind some of its names. Returns how the tree's
    names resolve (project.resolver) and what its modules define (qualified names)."""
    from recompat import mappings

    to, style = todo[0][2], todo[0][3]
    facts = [results[item[0]].facts for item in todo if results[item[0]].facts is not None]
    unread = []   # (entry, bytes, facts) of the files not translated that star-import a module
    for e in others:   # files without the source framework's name: re-exports, base classes of their own
        package = _package_of(e.display)
        module = project.module_name(e.display, package)
        if module is None:
            continue
        try:
            with open(e.abspath, "rb") as f:
                data = f.read()
            with _collector_paused():
                facts.append(project.module_facts(names.resolve_relative_imports(ast.parse(data), package), module))
        except (OSError, SyntaxError, ValueError):
            continue    # its own result says what is wrong with it, if anything
        if facts[-1]["stars"]:
            unread.append((e, data, facts[-1]))
    exports = project.star_exports(facts)
    models = project.model_classes(facts, mappings.default().frameworks[OTHER[to]], exports)
    frm = OTHER[to]

    def stars_of(f: dict) -> dict[str, dict[str, str]]:
        return {m: exports[m] for m in f["stars"] if exports.get(m)}

    items = [(*item[:4], holders, models, stars_of(f)) for item in todo
             if (f := results[item[0]].facts) is not None
             and (project.missed_models(f, models) or project.names_framework(stars_of(f), frm))]
    for e, data, f in unread:
        if project.names_framework(stars := stars_of(f), frm):
            others.remove(e)
            originals[e.display] = data
            todo.append((e.display, data, to, style, (), frozenset(), {}))
            items.append((e.display, data, to, style, holders, models, stars))
    out.more(sum(lines_of[i[0]] for i in items))
    for item, r in zip(items, _results(items, jobs, lambda k: out.tick(lines_of[items[k][0]]))):
        results[item[0]] = r
    return project.resolver(facts, exports), {f"{f['module']}.{name}" for f in facts for name in f["defined"]}


# --------------------------------------------------------------------------------------------
# Writing


def _read_only_reason(path: str) -> str | None:
    """Why ``path`` cannot be rewritten in place, or None. Never changes permissions."""
    st = os.stat(path)
    # os.access alone is not enough: root may write anything, but a file whose owner took the
    # write bits away (chmod a-w) is meant to stay as it is.
    if not os.access(path, os.W_OK) or not st.st_mode & (stat.S_IWUSR | stat.S_IWGRP | stat.S_IWOTH):
        return "the file is read-only — make it writable (chmod u+w) to translate it in place, or write a copy with -o DIR"
    folder = os.path.dirname(os.path.abspath(path))
    if not os.access(folder, os.W_OK | os.X_OK):
        return (f"its folder {folder} is not writable (the rewrite goes to a temporary file beside it, then a rename)"
                " — make the folder writable, or write a copy with -o DIR")
    return None


def _same_bytes(path: str, data: bytes) -> bool:
    try:
        if os.path.getsize(path) != len(data) or not os.path.isfile(path):
            return False
        with open(path, "rb") as f:
            return f.read() == data
    except OSError:
        return False


# --------------------------------------------------------------------------------------------
# Diff


def _decode(data: bytes) -> str:
    try:
        enc, _ = tokenize.detect_encoding(io.BytesIO(data).readline)
    except SyntaxError:
        enc = "utf-8"
    text = data.decode(enc, errors="surrogateescape" if enc.startswith("utf") else "replace")
    return text[1:] if text.startswith("\ufeff") else text


def unified_diff(path: str, old: bytes, new: bytes) -> str:
    """A ``git diff``-style unified diff (``a/`` and ``b/`` paths) of one file."""
    a, b = _decode(old).splitlines(keepends=True), _decode(new).splitlines(keepends=True)
    p = path.replace(os.sep, "/")
    out = []
    for line in difflib.unified_diff(a, b, f"a/{p}", f"b/{p}"):
        out.append(line)
        if not line.endswith(("\n", "\r")):
            out.append("\n\\ No newline at end of file\n")
    return "".join(out)


# --------------------------------------------------------------------------------------------
# The run


def validate(opts: Options) -> None:
    """Raise UsageError for options that cannot work together (nothing read or written yet)."""
    if not opts.paths:
        raise UsageError("no PATH given — name the files or folders to translate, e.g. `recompat translate src/`")
    if opts.to not in TARGETS:
        raise UsageError(f"--to {opts.to!r}: choose one of {', '.join(TARGETS)}")
    if opts.scope not in SCOPES:
        raise UsageError(f"--scope {opts.scope!r}: choose one of {', '.join(SCOPES)}")
    if opts.style is not None and opts.style not in STYLES:
        raise UsageError(f"--style {opts.style!r}: choose one of {', '.join(STYLES)}")
    if opts.to == "torch" and opts.style is not None:
        raise UsageError(f"--style {opts.style} shapes MindSpore output only — leave it out with --to torch "
                         "(marks become checkpointed calls where the calls are in sight)")
    if opts.jobs < 0:
        raise UsageError(f"-j {opts.jobs}: give a number of processes >= 1, or 0 for one per CPU")
    writes = [n for n, on in (("-o", opts.output is not None), ("--in-place", opts.in_place),
                              ("--check", opts.check)) if on]
    if len(writes) > 1:
        raise UsageError(f"{' and '.join(writes)} cannot be combined — choose one mode")
    if opts.in_place and opts.diff:
        raise UsageError("--in-place and --diff cannot be combined — choose one mode")
    if opts.json_path == "-" and opts.diff:
        raise UsageError("--json - and --diff both write to stdout — give --json a file name")
    if opts.output is not None:
        out = os.path.realpath(opts.output)
        if os.path.exists(opts.output) and not os.path.isdir(opts.output):
            raise UsageError(f"-o {opts.output}: exists and is not a folder — name a folder to mirror the tree into")
        # Up front, not once per file: every write under a read-only folder would fail the same way.
        nearest = opts.output
        while not os.path.exists(nearest) and os.path.dirname(os.path.abspath(nearest)) != os.path.abspath(nearest):
            nearest = os.path.dirname(os.path.abspath(nearest))
        if os.path.isdir(nearest) and not os.access(nearest, os.W_OK | os.X_OK):
            raise UsageError(f"-o {opts.output}: cannot write into {nearest} (permission denied) — make it writable, "
                             "or name another folder")
        for p in opts.paths:
            if os.path.exists(p) and os.path.realpath(p) == out:
                raise UsageError(f"-o {opts.output} is the input {p} itself — use --in-place to rewrite files where "
                                 "they are, or name another folder")


class _Out:
    """stderr for messages, with the progress bar (when there is one) kept out of the way."""

    def __init__(self, stderr: IO[str]):
        self.stderr = stderr
        self.bar = None

    def start_bar(self, total_lines: int) -> None:
        """A bar over the translation (the slow part), in lines: files differ a thousandfold in
        size. Only on a terminal, and only once a run has taken a second (tqdm's delay)."""
        isatty = getattr(self.stderr, "isatty", None)
        if total_lines and isatty is not None and isatty():
            from tqdm import tqdm   # only for a terminal: keeps the import off the common path

            tqdm.monitor_interval = 0   # no monitor thread (forking a pool after it warns)
            self.bar = tqdm(total=total_lines, file=self.stderr, unit=" lines", unit_scale=True, delay=1.0,
                            leave=False, desc="recompat: translating", disable=False)

    def line(self, text: str) -> None:
        bar = self.bar
        # tqdm.write would draw a bar that its `delay` still holds back: write around it only
        # once it is on the screen.
        if bar is not None and getattr(bar, "last_print_t", 0) >= bar.start_t + bar.delay:
            bar.write(text, file=self.stderr)
        else:
            print(text, file=self.stderr)

    def more(self, n: int) -> None:
        if self.bar is not None:
            self.bar.total += n

    def tick(self, n: int = 1) -> None:
        if self.bar is not None:   # also called from the pool's result thread: tqdm locks
            self.bar.update(n)

    def close(self) -> None:
        if self.bar is not None:
            self.bar.close()


def cpus() -> int:
    """The CPUs this process may run on (its affinity, which a container or `taskset` narrows), else all."""
    try:
        return len(os.sched_getaffinity(0)) or 1
    except AttributeError:   # not on Linux
        return os.cpu_count() or 1


def _fmt_error(path: str, message: str) -> str:
    return f"recompat: error: {message}" if message.startswith(path) else f"recompat: error: {path}: {message}"


def run(opts: Options, *, stdout: IO[str] | None = None, stderr: IO[str] | None = None) -> Report:
    """Translate ``opts.paths`` as ``opts`` says. Raises UsageError before doing anything when the
    options cannot work; otherwise processes every file it can and returns the report."""
    stdout = sys.stdout if stdout is None else stdout
    stderr = sys.stderr if stderr is None else stderr
    validate(opts)
    _TREES.clear()   # a run reads the files as they are now
    _package_at.cache_clear()
    start = time.perf_counter()
    jobs = opts.jobs   # 0: as many as the CPUs and the work allow (_results)

    summary = Summary()
    failed: list[FileResult] = []
    notices: list[str] = []
    entries = _collect(opts, failed, notices)
    py = [e for e in entries if e.is_py]
    out = _Out(stderr)
    for n in notices:
        out.line(n)
    for r in failed:
        out.line(_fmt_error(r.path, r.error or ""))

    results: dict[str, FileResult] = {}
    originals: dict[str, bytes] = {}
    lines_of: dict[str, int] = {}
    layouts: dict[str, notebooks.Layout] = {}
    todo, others = _read_all(py, opts, summary, results, originals, lines_of, layouts)
    try:
        summary.files_examined, tree = _translate_all(todo, others, jobs, results, originals, lines_of, out)
    finally:
        out.close()
    _notebooks_back(layouts, results, originals, opts)
    classes = _verdicts(results, tree, opts.to) if tree is not None else []
    summary.classes = {k: sum(v.verdict == k for v in classes) for k in verdicts.VERDICTS} if classes else {}
    ordered, would_change = _deliver(entries, failed, results, originals, opts, summary, out, stdout)
    summary.files_failed = sum(1 for r in ordered if r.error is not None)
    summary.elapsed_s = time.perf_counter() - start

    if opts.check and would_change and not opts.quiet:
        for p in would_change:
            print(f"would change: {p}", file=stderr)
    if not py and not failed:
        print("recompat: warning: no Python files found in " + ", ".join(opts.paths), file=stderr)
    _print_summary(opts, summary, stderr)

    if summary.files_failed:
        code = 2
    elif opts.check and summary.files_changed:
        code = 1
    else:
        code = 0
    report = Report(ordered, summary, code, classes)
    if opts.json_path is not None:
        _write_json(opts, report, stdout, stderr)
    return report


def _verdicts(results: dict[str, FileResult], tree, to: str) -> list:
    """Will each model class run (translator/verdicts.py)? Its file gets RC328 where it will not."""
    from recompat import mappings

    resolve, defined = tree
    listed = list(results.values())
    maps = mappings.default()
    methods = {e.names(OTHER[to])[0].rpartition(".")[2] for e in maps.entries if e.rule == "method_name"}
    frm, target = maps.frameworks[OTHER[to]], maps.frameworks[to]
    members = {frm.tensor_class: target.tensor_methods | target.tensor_attributes | target.generic_attributes,
               **{base: target.model_methods for base in frm.model_bases}}

    def runs_there(api: str) -> bool:   # a member the target's class has under the same name
        owner, _, member = api.rpartition(".")
        return member in members.get(owner, ())

    found = verdicts.class_verdicts(listed, resolve, defined, tuple(maps.frameworks), methods, runs_there)
    verdicts.add_notes(listed, found)
    return found


def _read_all(py: list[_Entry], opts: Options, summary: Summary, results: dict, originals: dict,
              lines_of: dict, layouts: dict) -> tuple[list[_Item], list[_Entry]]:
    """Read every file once: (the files to translate, the others). A file without the trigger word is done here
    (an empty result), and kept among the others: it is looked at again if holders turn up. A notebook is
    translated as the Python file its code cells make (translator/notebooks.py; its layout into `layouts`); it is
    no module, so never among the others."""
    from recompat import mappings

    wanted = MODEL_TRIGGERS[opts.to] if opts.scope == "model" else trigger(mappings.default(), opts.to)
    todo: list[_Item] = []
    others: list[_Entry] = []
    for e in py:
        try:
            with open(e.abspath, "rb") as f:
                data = f.read()
        except OSError as exc:
            results[e.display] = FileResult(e.display, error=_read_error(e, exc))
            continue
        source = data
        if e.display.endswith(".ipynb"):
            try:
                source, layouts[e.display] = notebooks.to_python(data, e.display)
            except TranslateError as exc:
                results[e.display] = FileResult(e.display, error=str(exc))
                continue
        n_lines = source.count(b"\n") + (1 if source and not source.endswith(b"\n") else 0)
        summary.lines += n_lines
        if wanted.search(source):
            originals[e.display] = data
            todo.append((e.display, source, opts.to, (opts.style or DEFAULT_STYLE, opts.scope), (), frozenset(), {}))
        else:
            results[e.display] = FileResult(e.display)
            if e.display not in layouts:
                others.append(e)
        lines_of[e.display] = n_lines
    summary.files_scanned = len(py)
    return todo, others


def _notebooks_back(layouts: dict, results: dict, originals: dict, opts: Options) -> None:
    """Each translated notebook's result in its own terms: sites and diagnostics in their cells, the new cells put
    back into its JSON (outputs cleared with --clear-outputs)."""
    for display, layout in layouts.items():
        r = results.get(display)
        if r is None or r.error is not None or display not in originals:
            continue
        notebooks.place(r, layout)
        if r.new_data is None and not opts.clear_outputs:
            continue
        new, _ = (r.new_data, None) if r.new_data is not None else notebooks.to_python(originals[display], display)
        try:
            data = notebooks.from_python(new, layout, display, opts.clear_outputs)
        except TranslateError as exc:
            results[display] = FileResult(display, error=str(exc))
            continue
        r.changed, r.new_data = data != originals[display], (data if data != originals[display] else None)


def _deliver(entries: list[_Entry], failed: list[FileResult], results: dict, originals: dict, opts: Options,
             summary: Summary, out: _Out, stdout: IO[str]) -> tuple[list[FileResult], list[str]]:
    """Write, show and report, file by file in path order: (every result, the paths that change)."""
    ordered: list[FileResult] = list(failed)
    would_change: list[str] = []
    for e in entries:
        if not e.is_py:
            if opts.output is not None:
                _mirror_copy(e, opts, summary, ordered, out)
            continue
        r = results.pop(e.display)
        old = originals.pop(e.display, None)
        ordered.append(r)
        if not opts.quiet:
            for d in r.notes:
                out.line(str(d))
            for site in r.sites:
                for d in site.diagnostics:
                    out.line(str(d))
        if r.error is not None:
            out.line(_fmt_error(r.path, r.error))
            continue
        for site in r.sites:
            summary.sites[site.status] += 1
        changed = bool(r.changed and r.new_data is not None and r.new_data != old)
        if changed:
            summary.files_changed += 1
            would_change.append(r.path)
            if opts.diff:
                stdout.write(unified_diff(r.path, old or b"", r.new_data))
        if opts.in_place and changed:
            _write_in_place(e, r, old, summary, out)
        elif opts.output is not None:
            if changed:
                _mirror_write(e, r.new_data, opts, summary, r, out, copied=False)
            else:
                _mirror_copy(e, opts, summary, ordered, out, result=r)
        r.new_data = None   # written or shown: do not keep every file's text around
    return ordered, would_change


def _broken_link(path: str) -> str:
    """What is wrong with a symbolic link that cannot be followed: a loop, or a target that is not there."""
    try:
        os.stat(path)
    except OSError as exc:
        if exc.errno == errno.ELOOP:
            return f"symbolic link loop (it leads back to itself through {os.readlink(path)!r})"
    return f"dangling symbolic link (its target {os.readlink(path)!r} does not exist)"


def _read_error(e: _Entry, exc: OSError) -> str:
    if os.path.islink(e.abspath) and not os.path.exists(e.abspath):
        return f"{e.display}: {_broken_link(e.abspath)} — fix or remove the link, or --exclude it"
    if isinstance(exc, PermissionError):
        return f"{e.display}: cannot read it (permission denied) — make it readable (chmod u+r), or --exclude it"
    if isinstance(exc, IsADirectoryError):
        return f"{e.display}: is a folder, not a file"
    return f"{e.display}: cannot read it ({exc.strerror or exc}) — check the file, or --exclude it"


def _write_in_place(e: _Entry, r: FileResult, old: bytes | None, summary: Summary, out: _Out) -> None:
    target = os.path.realpath(e.abspath)   # through a symlink: the link stays a link
    try:
        why = _read_only_reason(target)
        # An edit saved while the file was being translated would be lost under the rewrite of the old text.
        if why is None and old is not None and not _same_bytes(target, old):
            if _same_bytes(target, r.new_data):
                return   # another run wrote this same translation meanwhile
            why = "it changed on disk while it was being translated; left as it is now — run recompat again"
        if why is None:
            write_atomic(target, r.new_data, os.stat(target).st_mode)
            summary.files_written += 1
            return
    except OSError as exc:
        why = f"cannot write it ({exc.strerror or exc}); the file is unchanged — check the folder, or use -o DIR"
    r.error = f"{e.display}: {why}"
    out.line(_fmt_error(r.path, r.error))


def _dest(e: _Entry, opts: Options) -> str:
    return os.path.join(opts.output, e.rel)


def _mirror_write(e: _Entry, data: bytes, opts: Options, summary: Summary, r: FileResult | None,
                  out: _Out, *, copied: bool) -> bool:
    dest = _dest(e, opts)
    try:
        if os.path.exists(dest) and os.path.samefile(dest, e.abspath):
            raise _Refused(f"{e.display}: -o {opts.output} would overwrite this input file — "
                           "use --in-place to rewrite files where they are, or name another folder")
        if _same_bytes(dest, data):
            summary.files_up_to_date += 1   # already there: never rewritten
            return True
        os.makedirs(os.path.dirname(dest) or ".", exist_ok=True)
        write_atomic(dest, data, os.stat(e.abspath).st_mode)
    except (_Refused, OSError) as exc:
        msg = str(exc) if isinstance(exc, _Refused) else (
            f"{e.display}: cannot write {dest} ({exc.strerror or exc}) — check that folder")
        if r is None:
            r = FileResult(e.display)
        r.error = msg
        out.line(_fmt_error(r.path, msg))
        return False
    if copied:
        summary.files_copied += 1
    else:
        summary.files_written += 1
    return True


class _Refused(Exception):
    pass


def _mirror_copy(e: _Entry, opts: Options, summary: Summary, ordered: list[FileResult], out: _Out,
                 result: FileResult | None = None) -> None:
    """-o: copy a file with nothing to translate byte for byte (non-Python files included)."""
    try:
        with open(e.abspath, "rb") as f:
            data = f.read()
    except OSError as exc:
        r = result or FileResult(e.display)
        r.error = _read_error(e, exc)
        if result is None:
            ordered.append(r)
        out.line(_fmt_error(r.path, r.error))
        return
    r = result or FileResult(e.display)
    if not _mirror_write(e, data, opts, summary, r, out, copied=True) and result is None:
        ordered.append(r)


def _n(count: int, word: str) -> str:
    return f"{count} {word}" if count == 1 else f"{count} {word}s"


def _pct(x: float | None) -> str:
    return "n/a" if x is None else f"{100 * x:.1f}%"


def _print_summary(opts: Options, s: Summary, stderr: IO[str]) -> None:
    p = lambda text: print(f"recompat: {text}", file=stderr)  # noqa: E731
    p(f"{s.files_scanned:,} file{'' if s.files_scanned == 1 else 's'} scanned, {s.files_examined:,} examined, "
      f"{s.files_changed:,} changed, {s.files_failed:,} failed")
    if s.total_sites:
        st = ", ".join(f"{s.sites[k]} {k}" for k in ("converted", "partial", "manual"))
        p(f"{_n(s.total_sites, 'site')}: {st}; conversion rate {_pct(s.conversion_rate)} "
          f"({_pct(s.rewritten_rate)} rewritten)")
    else:
        source = "torch" if opts.to == "mindspore" else "MindSpore"
        p(f"no {source} API uses found" if opts.scope == "model"
          else f"no {'checkpoint' if opts.to == 'mindspore' else 'recompute'} call sites found")
    if s.classes:
        n, c = sum(s.classes.values()), s.classes
        p(f"{n} model class{'' if n == 1 else 'es'}: {c[verdicts.RUNS]} will run, {c[verdicts.MAY_NOT]} may not "
          f"(on some arguments: RC329), {c[verdicts.WILL_NOT]} will not (RC328)")
    lps = f"{s.lines_per_s:,.0f} lines/s" if s.lines_per_s else "n/a lines/s"
    p(f"{s.lines:,} lines in {s.elapsed_s:.2f} s ({lps})")
    if s.files_failed:
        p(f"{_n(s.files_failed, 'file')} could not be processed (see the errors above)"
          + (f" and {'was' if s.files_failed == 1 else 'were'} not written to {opts.output}"
             if opts.mode == "output" else "") + "; exit status 2")
    mode = opts.mode
    if mode == "in-place":
        p(f"rewrote {_n(s.files_written, 'file')} in place; files with nothing to change were not touched")
    elif mode == "output":
        p(f"wrote {s.files_written} translated and {_n(s.files_copied, 'copied file')} into {opts.output}"
          + (f" ({s.files_up_to_date} already up to date)" if s.files_up_to_date else ""))
    elif mode == "check":
        p(f"{_n(s.files_changed, 'file')} would change" if s.files_changed else "nothing would change")
    else:
        p("nothing written" + (" (--diff only shows)" if mode == "diff" else "")
          + " — use --in-place to rewrite the files, or -o DIR to write a translated copy"
          + ("" if mode == "diff" else "; --diff shows the changes"))


def json_doc(opts: Options, report: Report, files: list[dict] | None = None) -> dict:
    """What --json writes: the arguments, each file with a site, a note or an error (or `files`, as given), the
    model classes' verdicts and the summary."""
    from recompat import __version__

    args = asdict(opts)
    args["mode"] = opts.mode
    return {
        "tool": "recompat",
        "version": __version__,
        "arguments": args,
        "exit_code": report.exit_code,
        "files": files if files is not None else [r.to_dict() for r in report.results if r.sites or r.notes or r.error],
        "classes": [v.to_dict() for v in report.classes],
        "summary": report.summary.to_dict(),
    }


def _write_json(opts: Options, report: Report, stdout: IO[str], stderr: IO[str]) -> None:
    text = json.dumps(json_doc(opts, report), indent=2, ensure_ascii=False) + "\n"
    if opts.json_path == "-":
        stdout.write(text)
        return
    try:
        write_atomic(opts.json_path, text)
    except OSError as exc:
        print(f"recompat: error: --json {opts.json_path}: cannot write it ({exc.strerror or exc})"
              " — check the folder", file=stderr)
        report.exit_code = 2


def iter_python_files(paths: Iterable[str], exclude: list[str] | None = None) -> list[str]:
    """The .py files ``recompat translate PATHS`` would look at, sorted (for tools and the bench)."""
    return [e.display for e in _collect(Options(list(paths), exclude=list(exclude or [])), []) if e.is_py]
