"""Model code out of documentation text: the seeds' torch and MindSpore examples as importable sources.

    from recompat.compat.seeds import code_blocks
    for block in code_blocks(text, name="001_....txt"):
        block.framework     # "torch" | "mindspore": the framework its imports name
        block.source        # its imports and class definitions only (the script lines around them are left out)
        block.models        # names of its model classes (nn.Module / nn.Cell subclasses, directly or through
                            # another class of the block), outermost first: the ones no other class of the block uses

Two layouts are read:

* plain code lines (a page's code block with its line breaks kept): a block starts at an ``import`` line and
  runs to the next ``# PyTorch`` / ``# MindSpore`` marker line or the end of the text, cut back to the longest
  run of lines that parses;
* doctests (``>>> ...`` / ``... ...``), one statement a line, or flattened onto one line (a page scraped without
  its line breaks: ``>>> class A(nn.Cell): ... def __init__(self): ...``). A flattened doctest has lost its
  indentation; it is put back for the shape documentation examples have (a class whose methods hold plain
  statements: class at 0, ``def`` at 4, its body at 8); a result that does not parse is left out.

Text that is neither (prose and code run together on one line, or code with ``...`` elisions) gives no block.
Pure text: nothing here imports torch or MindSpore.
"""
from __future__ import annotations

import ast
import re
from dataclasses import dataclass, field

__all__ = ["CodeBlock", "code_blocks"]

_MARKER = re.compile(r"^\s*#\s*(pytorch|torch|mindspore)\s*$", re.IGNORECASE)
_IMPORT = re.compile(r"^(import|from)\s+[A-Za-z_]")
_MODEL_BASES = {"torch": ("Module",), "mindspore": ("Cell",)}


@dataclass
class CodeBlock:
    name: str                   # where it comes from: "<text name>:<line>"
    framework: str              # "torch" | "mindspore"
    source: str                 # imports and class definitions, ready to import
    models: list[str] = field(default_factory=list)


def code_blocks(text: str, name: str = "<text>") -> list[CodeBlock]:
    """Every torch or MindSpore code block of ``text`` that defines a model class."""
    out = []
    for line_no, code in [*_plain_blocks(text), *_doctest_blocks(text)]:
        block = _block(code, f"{name}:{line_no}")
        if block is not None:
            out.append(block)
    return out


# --------------------------------------------------------------------------- finding code

def _plain_blocks(text: str):
    lines = text.splitlines()
    i = 0
    while i < len(lines):
        if not _IMPORT.match(lines[i]):
            i += 1
            continue
        j = i + 1
        while j < len(lines) and not _MARKER.match(lines[j]):
            j += 1
        code = _longest_parsing(lines[i:j])
        if code is not None:
            yield i + 1, code
        i = j


def _longest_parsing(lines: list[str]) -> str | None:
    for end in range(len(lines), 0, -1):
        code = "\n".join(lines[:end]) + "\n"
        try:
            ast.parse(code)
        except SyntaxError:
            continue
        return code
    return None


_PROMPT = re.compile(r"^\s*(>>>|\.\.\.)(?: (.*)|$)")


def _flattened(line: str) -> bool:
    return line.count(">>> ") > 1 or " ... " in line


def _doctest_blocks(text: str):
    lines, start = [], None
    for line_no, line in enumerate(text.splitlines(), 1):
        if ">>> " in line and _flattened(line):
            statements = [s for s in re.split(r"(?:^|\s)>>> ", line[line.index(">>> "):]) if s.strip()]
            code = _longest_parsing("\n".join(_reindent(s) for s in statements).splitlines())
            if code is not None:
                yield line_no, code
            continue
        m = _PROMPT.match(line)
        if m:
            start = start or line_no
            lines.append(m.group(2) or "")
        elif lines:
            yield start, "\n".join(lines) + "\n"
            lines, start = [], None
    if lines:
        yield start, "\n".join(lines) + "\n"


def _reindent(statement: str) -> str:
    parts = [p.strip() for p in re.split(r"(?:^|\s)\.\.\.(?=\s|$)", statement)]
    out, depth = [], 0
    for p in parts:
        if not p:
            continue
        if p.startswith("class "):
            depth = 0
        elif p.startswith(("def ", "@")):
            depth = 1 if out and out[0].startswith("class ") else 0
        else:
            depth = 2 if out and out[0].startswith("class ") else (1 if out else 0)
        out.append("    " * depth + p)
    return "\n".join(out) if out else ""


# --------------------------------------------------------------------------- keeping the model code

def _block(code: str, name: str) -> CodeBlock | None:
    try:
        tree = ast.parse(code)
    except SyntaxError:
        return None
    framework = None
    for node in tree.body:
        if isinstance(node, (ast.Import, ast.ImportFrom)):
            mods = [a.name for a in node.names] if isinstance(node, ast.Import) else [node.module or ""]
            for mod in mods:
                root = mod.split(".")[0]
                if root in ("torch", "mindspore"):
                    framework = framework or root
    if framework is None:
        return None
    kept = [n for n in tree.body if isinstance(n, (ast.Import, ast.ImportFrom, ast.ClassDef))]
    classes = {n.name: n for n in kept if isinstance(n, ast.ClassDef)}
    models: list[str] = []
    for n in classes.values():      # in order: a base defined earlier in the block is known by then
        if any(_base_name(b) in _MODEL_BASES[framework] or _base_name(b) in models for b in n.bases):
            models.append(n.name)
    if not models:
        return None
    used = {x.id for n in classes.values() for x in ast.walk(n) if isinstance(x, ast.Name)}
    outer = [m for m in models if m not in used] + [m for m in models if m in used]
    source = "".join(("\n\n" if isinstance(n, ast.ClassDef) else "") + ast.get_source_segment(code, n) + "\n"
                     for n in kept)
    return CodeBlock(name=name, framework=framework, source=source, models=outer)


def _base_name(node: ast.AST) -> str | None:
    if isinstance(node, ast.Attribute):
        return node.attr
    if isinstance(node, ast.Name):
        return node.id
    return None
