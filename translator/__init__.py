"""The source translator: finds checkpoint/recompute sites and rewrites them into the other framework.

A text job: nothing here imports torch or MindSpore.
"""
from __future__ import annotations

import ast

from recompat import mappings as _mappings
from recompat.translator.model import Diagnostic, FileResult, Site, TranslateError
from recompat.translator.source import Source

DIRECTIONS = ("mindspore", "torch")
STYLES = ("function", "cell")

# A file whose bytes lack this word has no site to rewrite: it is passed over unparsed.
TRIGGERS = {"mindspore": b"checkpoint", "torch": b"recompute"}

__all__ = ["translate_bytes", "Diagnostic", "FileResult", "Site", "TranslateError", "DIRECTIONS", "STYLES", "TRIGGERS"]


def translate_bytes(data: bytes, path: str, *, to: str = "mindspore", style: str = "function",
                    holders=()) -> FileResult:
    """Translate one file's bytes. Pure: no I/O. Raises TranslateError for a file it cannot read.

    `holders`: attribute names that other files assign torch's checkpoint to (see FileResult.holders);
    calls through `<obj>.<name>(...)` here are then checkpoint calls too."""
    if to not in DIRECTIONS:
        raise ValueError(f"unknown target {to!r}: choose one of {', '.join(DIRECTIONS)}")
    if style not in STYLES:
        raise ValueError(f"unknown style {style!r}: choose one of {', '.join(STYLES)}")
    result = FileResult(path)
    m = _mappings.default()
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
    return _finish(data, src, tree, result, lambda s2, t2: settle_imports(s2, t2, m, tx.ms, tx.ms_used, tx.support))


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
