"""Jupyter notebooks (.ipynb) for `recompat translate`: their code cells translated as one Python file, so that a
cell's imports serve the cells after it, and put back cell by cell.

The code cells are joined, each after a marker line of its own (`# %% recompat cell N`); a line IPython reads as a
magic or a shell command (`%matplotlib inline`, `!pip install ...`) is commented out with a marker of its own and
restored after. The translation's sites and diagnostics are then placed in their cell (`Diagnostic.cell`, shown as
`file.ipynb:cell:line:col`, cells counted from 1 among all cells as Jupyter shows them). Only the code cells' sources
change (and, with `clear_outputs`, their outputs and execution counts); the JSON is written back as it was written:
the indent, key order and escaping that reproduce the file byte for byte are found first, and a notebook written
otherwise is refused rather than reformatted.
"""
from __future__ import annotations

import json
import re
from dataclasses import dataclass, field

from recompat.translator.results import FileResult, TranslateError

MARK = "# %% recompat cell "
MAGIC = "# recompat magic: "
_MAGIC_LINE = re.compile(r"^(\s*)([%!?]|[A-Za-z_][A-Za-z0-9_.]*\?\s*$)")


@dataclass
class Layout:
    """How a notebook became Python: its JSON, its style, and where each code cell's lines went."""
    notebook: dict
    style: dict
    cells: list[int] = field(default_factory=list)          # the index (in notebook["cells"]) of each code cell
    starts: list[int] = field(default_factory=list)         # the first Python line of each code cell's source


def _style(text: str, data: dict) -> dict:
    """The json.dumps settings that write `data` back as `text` byte for byte."""
    for indent in (1, 2, 4, None):
        for sort_keys in (True, False):
            for ensure_ascii in (False, True):
                style = {"indent": indent, "sort_keys": sort_keys, "ensure_ascii": ensure_ascii}
                out = json.dumps(data, **style)
                if out == text or out + "\n" == text:
                    return {**style, "newline": out + "\n" == text}
    raise TranslateError("its JSON is not laid out as Jupyter writes it (nbformat's indent and key order), so "
                         "recompat cannot write it back unchanged outside its code: save it from Jupyter, or "
                         "--exclude it")


def to_python(data: bytes, path: str) -> tuple[bytes, Layout]:
    """The notebook's code cells as one Python file, and how to put them back."""
    try:
        text = data.decode("utf-8")
        notebook = json.loads(text)
        cells = notebook["cells"]
    except (UnicodeDecodeError, ValueError, KeyError, TypeError) as exc:
        raise TranslateError(f"{path}: not a Jupyter notebook ({type(exc).__name__}: {exc}) — check the file, "
                             f"or --exclude it") from None
    try:
        layout = Layout(notebook, _style(text, notebook))
    except TranslateError as exc:
        raise TranslateError(f"{path}: {exc}") from None
    lines: list[str] = []
    for i, cell in enumerate(cells):
        if cell.get("cell_type") != "code":
            continue
        source = cell.get("source", "")
        source = "".join(source) if isinstance(source, list) else source
        lines.append(f"{MARK}{len(layout.cells) + 1}\n")
        layout.cells.append(i)
        layout.starts.append(len(lines) + 1)
        whole = source.startswith("%%")          # a cell magic (%%bash, %%time): the cell is not Python
        for line in source.splitlines():
            lines.append((MAGIC + line if whole or _MAGIC_LINE.match(line) else line) + "\n")
    return "".join(lines).encode("utf-8"), layout


def from_python(new: bytes, layout: Layout, path: str, clear_outputs: bool = False) -> bytes:
    """The notebook with each code cell's source taken from the translated Python file."""
    text = new.decode("utf-8")
    parts = re.split(r"^" + re.escape(MARK) + r"(\d+)\n", text, flags=re.M)
    numbers = [int(n) for n in parts[1::2]]
    if numbers != list(range(1, len(layout.cells) + 1)):
        raise TranslateError(f"{path}: the translation moved a cell marker (a bug in recompat: please report it "
                             f"with the notebook)")
    head, bodies = parts[0], parts[2::2]
    bodies[0] = head + bodies[0]             # imports the translation adds go to the first code cell
    for index, body in zip(layout.cells, bodies):
        cell = layout.notebook["cells"][index]
        lines = [line[len(MAGIC):] if line.startswith(MAGIC) else line for line in body.splitlines()]
        was = cell.get("source", "")
        old = "".join(was) if isinstance(was, list) else was
        source = "\n".join(lines) + ("\n" if old.endswith("\n") else "")
        if source != old:
            cell["source"] = source.splitlines(keepends=True) if isinstance(was, list) else source
        if clear_outputs:
            cell["outputs"], cell["execution_count"] = [], None
    style = dict(layout.style)
    newline = style.pop("newline")
    return (json.dumps(layout.notebook, **style) + ("\n" if newline else "")).encode("utf-8")


def place(result: FileResult, layout: Layout) -> None:
    """Each site and diagnostic of the translated Python file placed in its cell (1-based, among all cells), its
    line counted in the cell."""
    def where(line: int) -> tuple[int | None, int]:
        for k in range(len(layout.starts) - 1, -1, -1):
            if line >= layout.starts[k]:
                return layout.cells[k] + 1, line - layout.starts[k] + 1
        return None, line
    for item in [*result.sites, *result.notes, *(d for s in result.sites for d in s.diagnostics)]:
        item.cell, item.line = where(item.line)
