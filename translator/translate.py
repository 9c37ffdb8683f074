"""translate_bytes: one file's bytes in, its translation and every site's diagnostics out. Pure: no I/O."""
from __future__ import annotations

import ast

from recompat import mappings as _mappings
from recompat.constants import DIRECTIONS, SCOPES, STYLES   # defined there: `recompat --help` offers them too
from recompat.translator.results import Diagnostic, FileResult, Site, TranslateError
from recompat.translator.source import Source

# A file whose bytes lack this word has no site to rewrite: it is passed over unparsed.
TRIGGERS = {"mindspore": b"checkpoint", "torch": b"recompute"}
MODEL_TRIGGERS = {"mindspore": b"torch", "torch": b"mindspore"}   # --scope model: the source framework's name

__all__ = ["translate_bytes", "Diagnostic", "FileResult", "Site", "TranslateError", "DIRECTIONS", "STYLES", "SCOPES",
           "TRIGGERS", "MODEL_TRIGGERS"]


def translate_bytes(data: bytes, path: str, *, to: str = "mindspore", style: str = "function",
                    holders=(), scope: str = "checkpoint", mappings: _mappings.Mappings | None = None) -> FileResult:
    """Translate one file's bytes. Pure: no I/O. Raises TranslateError for a file it cannot read.

    `holders`: attribute names that other files assign torch's checkpoint to (see FileResult.holders);
    calls through `<obj>.<name>(...)` here are then checkpoint calls too.
    `scope`: "model" also translates the core API set (translator/models.py), after the checkpoint sites.
    `mappings`: the data to translate with (default: the mappings shipped with recompat)."""
    if to not in DIRECTIONS:
        raise ValueError(f"unknown target {to!r}: choose one of {', '.join(DIRECTIONS)}")
    if style not in STYLES:
        raise ValueError(f"unknown style {style!r}: choose one of {', '.join(STYLES)}")
    if scope not in SCOPES:
        raise ValueError(f"unknown scope {scope!r}: choose one of {', '.join(SCOPES)}")
    m = mappings or _mappings.default()
    result = _checkpoint_sites(data, path, to, style, holders, m)
    if scope == "model" and MODEL_TRIGGERS[to] in (result.new_data or data):
        _whole_model(data, path, to, result, m)
    return result


def _checkpoint_sites(data: bytes, path: str, to: str, style: str, holders, m) -> FileResult:
    result = FileResult(path)
    if to == "torch":
        return _to_torch(data, path, m, result)
    from recompat.translator.torch_to_mindspore import TorchToMindSpore, import_markers, settle_imports

    may_use_torch = TRIGGERS[to] in data and import_markers(m).search(data)
    if not (may_use_torch or any(h.encode() in data for h in holders)):
        return result
    src = Source(data, path)
    tree = src.parse()
    tx = TorchToMindSpore(src, tree, m, style=style, external_holders=holders)
    result.sites = tx.run()
    result.holders = sorted(set(tx.own_holders))
    return _finish(data, src, tree, result, lambda s2, t2: settle_imports(s2, t2, m, tx.ms, tx.ms_used, tx.support,
                                                                       tx.api_roots))


def _to_torch(data: bytes, path: str, m, result: FileResult) -> FileResult:
    from recompat.translator.mindspore_to_torch import MARKERS, MindSporeToTorch, settle_imports

    if TRIGGERS["torch"] not in data or not MARKERS.search(data):   # MindSpore's recompute needs MindSpore imported
        return result
    src = Source(data, path)
    tree = src.parse()
    tx = MindSporeToTorch(src, tree, m)
    result.sites = tx.run()
    return _finish(data, src, tree, result,
                   lambda s2, t2: settle_imports(s2, t2, m, tx.imports_needed, tx.ms_names_rewritten))


def _whole_model(data: bytes, path: str, to: str, result: FileResult, m) -> None:
    """The core API set, on the checkpoint pass's output; `data` is the original file."""
    from recompat.translator.models import ModelTranslator, add_imports, bound_names, drop_source_imports

    current = result.new_data or data
    src = Source(current, path)
    tree = src.parse()
    tx = ModelTranslator(src, tree, m, to)
    result.sites += tx.run()
    if not src.edited:
        return
    taken = tx.kept_roots | (bound_names(tree, tx.frm) - {n for n, _, _ in _source_imports(tree, tx.frm)})
    text, imports = tx.spell(src.result(), taken)
    src2 = Source(src.encode(text), path)
    tree2 = _parse_own_output(src2, path)
    drop_source_imports(src2, tree2, tx.frm, tx.kept_roots)
    add_imports(src2, tree2, imports)
    new = src2.encode(src2.result()) if src2.edited else src2.encode(text)
    _parse_own_output(Source(new, path), path)
    result.changed, result.new_data = new != data, (new if new != data else None)


def _source_imports(tree: ast.Module, frm: str):
    from recompat.translator import names

    return [b for s in ast.walk(tree) if isinstance(s, (ast.Import, ast.ImportFrom))
            for b in names.import_bindings(s) if b[1] and (b[1] == frm or b[1].startswith(frm + "."))]


def _finish(data: bytes, src: Source, tree: ast.Module, result: FileResult, settle) -> FileResult:
    """Stage 2 on the rewritten text (re-parsing it also proves stage 1 produced valid Python), then the result."""
    path = src.path
    if src.edited:
        src2 = Source(src.encode(src.result()), path)
        tree2 = _parse_own_output(src2, path)
    else:
        src2, tree2 = src, tree
    settle(src2, tree2)
    if not (src.edited or src2.edited):
        return result
    text = src2.result()
    _parse_own_output(Source(src.encode(text), path), path)
    new_data = src.encode(text)
    if new_data != data:
        result.changed, result.new_data = True, new_data
    return result


def _parse_own_output(src: Source, path: str) -> ast.Module:
    try:
        return ast.parse(src.text, filename=path)
    except SyntaxError as exc:  # a translator bug: never write such output
        raise TranslateError(
            f"{path}: recompat produced invalid Python at line {exc.lineno} ({exc.msg}); the file was left "
            f"unchanged: please report this with the file"
        ) from None
