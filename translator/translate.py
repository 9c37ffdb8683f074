"""translate_bytes: one file's bytes in, its translation and every site's diagnostics out. Pure: no I/O."""
from __future__ import annotations

import ast
import functools
import os
import re
import warnings

from recompat import mappings as _mappings
from recompat.constants import DEFAULT_STYLE, DIRECTIONS, OTHER, SCOPES, STYLES   # defined there: `recompat --help` offers them too
from recompat.translator import edits, names, project
from recompat.translator.results import Diagnostic, FileResult, Site, TranslateError
from recompat.translator.source import Source

MODEL_TRIGGERS = {"mindspore": re.compile(rb"torch"), "torch": re.compile(rb"mindspore")}   # --scope model: the source framework's name


class Words:
    """Does a file's bytes hold one of `words`, as a whole word? Python's regex engine tries an alternation at
    every byte (30 times slower than a literal search), so a few literal anchors find the candidates first:
    each word minus its first letter (CheckpointFunction holds `heckpoint`), shared where one holds another."""

    def __init__(self, words):
        self.anchors: list[bytes] = []
        for w in sorted((w.encode() for w in words), key=len):
            if not any(a in w for a in self.anchors):
                self.anchors.append(w[1:] or w)
        self.pattern = re.compile(rb"\b(?:" + b"|".join(map(re.escape, sorted(w.encode() for w in words))) + rb")\b")

    def search(self, data: bytes) -> bool:
        return any(a in data for a in self.anchors) and self.pattern.search(data) is not None


@functools.lru_cache(maxsize=None)
def trigger(m: _mappings.Mappings, to: str) -> Words:
    """What a file's bytes must hold to have a checkpoint site to translate to `to`: a word that ends a name of the
    source side's family (leftovers.family_words). A use of `a.b.c` spells `c` (as an attribute or in the
    import that binds it), so a file without any such word is passed over unparsed."""
    from recompat.translator.leftovers import family_words

    return Words(family_words(m, "torch" if to == "mindspore" else "mindspore"))


__all__ = ["translate_bytes", "Diagnostic", "FileResult", "Site", "TranslateError", "DIRECTIONS", "STYLES", "SCOPES",
           "trigger", "MODEL_TRIGGERS"]


def translate_bytes(data: bytes, path: str, *, to: str = "mindspore", style: str = DEFAULT_STYLE,
                    holders=(), scope: str = "checkpoint", mappings: _mappings.Mappings | None = None,
                    package: str | None = None, models: frozenset[str] = frozenset(),
                    classes: project.Tree | None = None, stars=None) -> FileResult:
    """Translate one file's bytes. Pure: no I/O. Raises TranslateError for a file it cannot read.

    `holders`: attribute names that other files assign torch's checkpoint to (see FileResult.holders);
    calls through `<obj>.<name>(...)` here are then checkpoint calls too.
    `scope`: "model" also translates the core API set (translator/models.py), after the checkpoint sites.
    `mappings`: the data to translate with (default: the mappings shipped with recompat).
    `package`: the dotted package the file belongs to (`deepspeed.runtime.pipe`), so that its relative imports
    resolve; None when it is not known.
    `models`: qualified names of model classes (Modules, Cells) of other files of the tree (translator/project.py):
    a class deriving from one is a model too.
    `classes`: the package's modules, read on demand (project.Tree; --to torch): a class, a factory or an
    attribute of another file is looked up there to tell what a recompute mark is on. Reading is the Tree's: this
    function does none.
    `stars`: what each `from m import *` of the file binds, for the tree's modules m (module -> {name: qualified
    name}, project.star_exports): a name read through one is known as what it is."""
    if to not in DIRECTIONS:
        raise ValueError(f"unknown target {to!r}: choose one of {', '.join(DIRECTIONS)}")
    if style not in STYLES:
        raise ValueError(f"unknown style {style!r}: choose one of {', '.join(STYLES)}")
    if scope not in SCOPES:
        raise ValueError(f"unknown scope {scope!r}: choose one of {', '.join(SCOPES)}")
    m = mappings or _mappings.default()
    stars = stars or {}
    result, origin, tree = _checkpoint_sites(data, path, package, to, style, holders, m, classes, scope, stars)
    if scope == "model" and (MODEL_TRIGGERS[to].search(result.new_data or data)
                             or project.names_framework(stars, OTHER[to])):
        _whole_model(data, path, package, to, result, m, origin, tree if result.new_data is None else None, models,
                     stars)
    return result


def _parse(src: Source, stars) -> ast.Module:
    tree = src.parse()
    if stars:
        names.bind_star_imports(tree, stars)
    return tree


def _checkpoint_sites(data: bytes, path: str, package: str | None, to: str, style: str, holders,
                      m, classes=None, scope: str = "checkpoint",
                      stars=None) -> tuple[FileResult, Origin, ast.Module | None]:
    """The checkpoint pass: its result, where each line of its output comes from in `data`, and the tree of `data`
    when it parsed it (None when it passed the file over)."""
    result = FileResult(path)
    if to == "torch":
        return _to_torch(data, path, package, m, result, classes, stars)
    from recompat.translator.leftovers import report_leftovers
    from recompat.translator.torch_to_mindspore import TorchToMindSpore, import_markers, settle_imports

    may_use_torch = trigger(m, to).search(data) and import_markers(m).search(data)
    if not (may_use_torch or any(h.encode() in data for h in holders)):
        return result, Origin(), None
    src = Source(data, path, package)
    tree = _parse(src, stars)
    tx = TorchToMindSpore(src, tree, m, style=style, external_holders=holders)
    result.sites = tx.run()
    result.holders = sorted(set(tx.own_holders))
    return (*_finish(data, src, tree, result,
                     lambda s2, t2: settle_imports(s2, t2, m, tx.ms, tx.ms_used, tx.support, tx.api_roots,
                                                   tx.runtime_used),
                     lambda s3, t3: report_leftovers(s3, t3, m, "torch"), import_markers(m)), tree)


def _to_torch(data: bytes, path: str, package: str | None, m, result: FileResult,
              classes=None, stars=None) -> tuple[FileResult, Origin, ast.Module | None]:
    from recompat.translator.leftovers import report_leftovers
    from recompat.translator.mindspore_to_torch import MindSporeToTorch, import_markers, settle_imports

    if not (trigger(m, "torch").search(data) and import_markers(m).search(data)):   # its names need their library imported
        return result, Origin(), None
    src = Source(data, path, package)
    tree = _parse(src, stars)
    tx = MindSporeToTorch(src, tree, m, classes, project.module_name(path, package))
    result.sites = tx.run()
    return (*_finish(data, src, tree, result,
                     lambda s2, t2: settle_imports(s2, t2, m, tx.imports_needed, tx.ms_names_rewritten),
                     lambda s3, t3: report_leftovers(s3, t3, m, "mindspore"), import_markers(m)), tree)


def _whole_model(data: bytes, path: str, package: str | None, to: str, result: FileResult, m, origin: Origin,
                 tree: ast.Module | None, models: frozenset[str], stars) -> None:
    """The core API set, on the checkpoint pass's output; `data` is the original file, `origin` maps the lines of
    that output to it (the sites report lines of the user's file); `tree`: the file's tree where the checkpoint
    pass parsed it and changed nothing (the passes never change a tree)."""
    from recompat.translator.models import ModelTranslator, add_imports, bound_names, drop_source_imports

    current = result.new_data or data
    src = Source(current, path, package)
    tree = tree or _parse(src, stars)
    module = project.module_name(path, package)
    scope = names.build_scope(tree, None)   # the module's, for its facts and its units
    if module is not None:
        result.facts = project.module_facts(tree, module, scope)
    tx = ModelTranslator(src, tree, m, to, models)
    sites = tx.run()    # after run(): a site found in code the translation removed is withdrawn
    if result.facts is not None:
        result.facts["models"] = sorted(f"{module}.{name}" for name in tx.model_classes)
    own = module or os.path.splitext(os.path.basename(path))[0]   # a loose file: what a script beside it imports
    result.units = project.module_units(tree, own, scope)
    for qual, unit in result.units.items():   # their lines become the user's file's, as the sites'
        for part in (unit, *unit["methods"].values()):
            part.update({k: origin.line(part[k]) for k in ("line", "end") if k in part})
            part["branches"] = [[origin.line(a), origin.line(b)] for a, b in part.get("branches", ())]
        unit["model"] = qual.rpartition(".")[2] in tx.model_classes
    edits.comment_manual_sites(src, tree, sites)
    tx.finish_steps()
    origin.remap(sites)
    result.sites += sites
    if not src.edited:
        return
    kept = tx.kept_roots   # the source names code left as it is reads (not what the translation removed)
    taken = kept | (bound_names(tree, tx.frm) - {n for n, _, _ in _source_imports(tree, tx.frm)})
    imports = tx.spell(taken) | _imports_of_kept_star_names(tree, kept, tx.frm)
    # the imports are settled on the same text and tree: the walk left import statements as they were
    drop_source_imports(src, tree, tx.frm, kept)
    add_imports(src, tree, imports)
    text = src.result()
    _check_own_output(text, path, src.skeleton(tree))
    new = src.encode(text)
    result.changed, result.new_data = new != data, (new if new != data else None)


class Origin:
    """Where each line of a pass's output comes from in the user's file, through the stages' edits."""

    def __init__(self, stages=()):
        self.stages = [s for s in stages if s is not None]   # each a Source.line_origins() list, first stage first

    def line(self, n: int) -> int:
        for origins in reversed(self.stages):
            n = origins[min(n, len(origins)) - 1] if origins else n
        return n

    def remap(self, sites) -> None:
        """Sites found on the output: their lines (and their diagnostics') become lines of the user's file."""
        if not self.stages:
            return
        for site in sites:
            site.line = self.line(site.line)
            for d in site.diagnostics:
                d.line = self.line(d.line)


def _source_imports(tree: ast.Module, frm: str):
    return [b for s in names.imports(tree)
            for b in names.import_bindings(s) if b[1] and (b[1] == frm or b[1].startswith(frm + "."))]


def _imports_of_kept_star_names(tree: ast.Module, kept: set[str], frm: str) -> set[str]:
    """The imports that keep meaning what they meant the names of `frm` that code left as it is reads through a
    star import only (create_act.py's `nn.SELU` from `from .activations import *`): the star's module is
    translated too, so it binds them to the other framework's names, or not at all."""
    explicit = {b[0] for s in tree.body for b in names.import_bindings(s)} if kept else set()
    return {names.import_statement(name, qual) for s in tree.body for name, qual, _ in names.star_bindings(s)
            if name in kept and name not in explicit and (qual == frm or qual.startswith(frm + "."))}


def _finish(data: bytes, src: Source, tree: ast.Module, result: FileResult, settle, report,
            markers: re.Pattern) -> tuple[FileResult, Origin]:
    """Stage 2 on the rewritten text (re-parsing it also proves stage 1 produced valid Python; `tree` is the
    file's, which serves where stage 1 changed nothing), then stage 3, what is left to `report` on the settled text
    (its sites are found there and reported with the user's lines); only where that text still holds `markers` (a
    module path of the family's names): else no name can resolve to one."""
    path = src.path
    text = src.result() if src.edited else src.text
    src2 = Source(src.encode(text), path, src.package)
    tree2 = _parse_own_output(src2.text, path, src2.package) if src.edited else tree
    settle(src2, tree2)
    stages = [src.line_origins() if src.edited else None]
    if src2.edited:
        text = src2.result()
        stages.append(src2.line_origins())
    new_data = src.encode(text)
    checked = not src2.edited   # new_data is what tree2 was parsed from
    last = (src2, tree2)        # the stage that wrote `text`, and the tree of its input
    if markers.search(new_data):
        # the settled text is stage 2's input when stage 2 changed nothing: its tree serves again
        src3 = src2 if checked else Source(new_data, path, src.package)
        tree3 = tree2 if checked else _parse_own_output(src3.text, path, src3.package)
        sites = report(src3, tree3)
        checked, last = True, (src3, tree3)
        Origin(stages).remap(sites)
        result.sites += sites
        if src3.edited:
            text = src3.result()
            stages.append(src3.line_origins())
            new_data, checked = src.encode(text), False
    if not checked:   # every text a stage wrote is checked before it can be written
        _check_own_output(text, path, last[0].skeleton(last[1]))
    if new_data != data:
        result.changed, result.new_data = True, new_data
    return result, Origin(stages)


def _parse_own_output(text: str, path: str, package: str | None) -> ast.Module:
    try:
        return names.resolve_relative_imports(ast.parse(text, filename=path), package)
    except SyntaxError as exc:  # a translator bug: never write such output
        raise TranslateError(
            f"{path}: recompat produced invalid Python at line {exc.lineno} ({exc.msg}); the file was left "
            f"unchanged: please report this with the file"
        ) from None


def _check_own_output(text: str, path: str, skeleton=None) -> None:
    """Raise TranslateError unless `text` is valid Python. Where a `skeleton` of it (source.Skeleton) is given and
    holds, that is enough. Else compiling decides, and where it fails, the parse (which words the error): compiling
    also refuses what parses (a `return` outside a function), which the user's file may hold."""
    if skeleton is not None and skeleton.holds():
        return
    try:
        with warnings.catch_warnings():   # the user's file's own warnings (invalid escapes) are not ours to show
            warnings.simplefilter("ignore")
            compile(text, path, "exec", dont_inherit=True)
    except SyntaxError:
        _parse_own_output(text, path, None)
