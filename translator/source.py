"""A source file as text: decoding as Python does, ast positions to offsets, span edits.

Rewrites are edits of exact spans of the original text, so everything outside them (comments,
blank lines, quotes, line endings, the encoding line, a BOM) stays byte for byte.
"""
from __future__ import annotations

import ast
import bisect
import codecs
import functools
import io
import itertools
import operator
import re
import tokenize
import warnings
from dataclasses import dataclass

from recompat.translator import names
from recompat.translator.results import TranslateError

_NEWLINE = re.compile(r"\r\n|\r|\n")
_TEMPLATE_NEWLINE = re.compile(r"(?<!\r)\n")   # a "\n" that is not already the end of a "\r\n"


@dataclass
class Edit:
    start: int
    end: int
    seq: int          # insertion order breaks ties between edits at one position
    text: str


_ORDER = operator.attrgetter("start", "end", "seq")   # the order edits apply in (a key: no Python-level __lt__)


class Source:
    """Decoded text of one file plus the bookkeeping to rewrite spans of it."""

    def __init__(self, data: bytes, path: str, package: str | None = None):
        self.path = path
        self.package = package    # the dotted package the file is in, when known: relative imports resolve
        try:
            self.encoding, _ = tokenize.detect_encoding(io.BytesIO(data).readline)
        except SyntaxError as exc:  # an unknown coding name, or undecodable bytes in the first two lines
            self.encoding = "utf-8"
            self._decode(data)
            if data.startswith(codecs.BOM_UTF8) and "encoding problem" in str(exc):
                raise TranslateError(f"{path}: starts with a UTF-8 byte-order mark but its coding line declares "
                                     "another encoding, so Python refuses it — remove the coding line or the "
                                     "byte-order mark") from None
            raise TranslateError(f"{path}: {exc}: declare a known encoding or save the file as UTF-8") from None
        self.text = self._decode(data)
        if self.encoding == "utf-8-sig" and self.text.startswith("\ufeff"):
            self.text = self.text[1:]  # decode already strips it; guard against a doubled BOM
        first = _NEWLINE.search(self.text)
        self.newline = first.group() if first else "\n"
        self._edits: list[Edit] = []
        self.deleted: set[int] = set()   # id() of the statements edits.delete_statement removed

    @functools.cached_property
    def _line_starts(self) -> list[int]:   # most files passed over never ask for a position
        return line_starts(self.text)

    def _decode(self, data: bytes) -> str:
        try:
            return data.decode(self.encoding)
        except UnicodeDecodeError as exc:
            line = data.count(b"\n", 0, exc.start) + 1
            raise TranslateError(
                f"{self.path}:{line}: not valid {self.encoding} (byte 0x{data[exc.start]:02x}): save the file as "
                f"UTF-8, or declare its encoding with a '# -*- coding: NAME -*-' line"
            ) from None

    def parse(self) -> ast.Module:
        try:
            return names.resolve_relative_imports(ast.parse(self.text, filename=self.path), self.package)
        except SyntaxError as exc:
            hint = "port it to Python 3 first" if "Missing parentheses" in str(exc.msg) else "fix it, or --exclude the file"
            raise TranslateError(
                f"{self.path}:{exc.lineno or 0}:{exc.offset or 0}: does not parse as Python 3 ({exc.msg}): {hint}"
            ) from None
        except ValueError as exc:  # e.g. source with NUL bytes
            raise TranslateError(f"{self.path}: cannot be parsed ({exc}): --exclude it") from None

    def encode(self, text: str) -> bytes:
        return text.encode(self.encoding)

    # -- positions -------------------------------------------------------------------------

    def offset(self, lineno: int, col_offset: int) -> int:
        """Character offset of an ast position (1-based line, column in UTF-8 bytes)."""
        start = self._line_starts[lineno - 1]
        line = self.text[start:start + col_offset + 1]  # a UTF-8 byte count bounds the char count
        if line.isascii():
            return start + col_offset
        end = self._line_starts[lineno] if lineno < len(self._line_starts) else len(self.text)
        return start + len(self.text[start:end].encode("utf-8")[:col_offset].decode("utf-8", "ignore"))

    def start(self, node: ast.AST) -> int:
        return self.offset(node.lineno, node.col_offset)

    def end(self, node: ast.AST) -> int:
        return self.offset(node.end_lineno, node.end_col_offset)

    def segment(self, node: ast.AST) -> str:
        return self.text[self.start(node):self.end(node)]

    def column(self, node: ast.AST) -> int:
        """1-based column in characters, for diagnostics."""
        return self.start(node) - self._line_starts[node.lineno - 1] + 1

    def line_start(self, lineno: int) -> int:
        return self._line_starts[lineno - 1]

    def line_end(self, lineno: int) -> int:
        """Offset just past the line's newline (or the end of the text)."""
        return self._line_starts[lineno] if lineno < len(self._line_starts) else len(self.text)

    def indent(self, lineno: int) -> str:
        start = self._line_starts[lineno - 1]
        line = self.text[start:self.line_end(lineno)]
        return line[:len(line) - len(line.lstrip(" \t"))]

    def lineno(self, offset: int) -> int:
        """1-based line of a character offset."""
        return bisect.bisect_right(self._line_starts, offset)

    def line(self, lineno: int) -> str:
        return self.text[self._line_starts[lineno - 1]:self.line_end(lineno)].rstrip("\r\n")

    # -- edits -----------------------------------------------------------------------------

    def replace(self, start: int, end: int, text: str) -> None:
        """Replace text[start:end]; '\\n' in `text` becomes the file's own line ending.

        Only a template's bare '\\n' is converted: text rebuilt from the source (render) already has the
        file's line endings, and converting them again would double them ('\\r\\r\\n')."""
        if self.newline != "\n":
            text = _TEMPLATE_NEWLINE.sub(self.newline, text)
        self._edits.append(Edit(start, end, len(self._edits), text))

    def insert(self, at: int, text: str) -> None:
        self.replace(at, at, text)

    def replace_node(self, node: ast.AST, text: str) -> None:
        self.replace(self.start(node), self.end(node), text)

    def render(self, start: int, end: int) -> str:
        """text[start:end] with the edits inside it applied; those edits are consumed.

        Lets a rule rebuild a whole expression around parts that inner rules already rewrote.
        """
        inner, outer = [], []
        for e in self._edits:
            (inner if start <= e.start and e.end <= end else outer).append(e)
        self._edits = outer
        return _apply(self.text[start:end], inner, shift=start)

    def render_node(self, node: ast.AST) -> str:
        return self.render(self.start(node), self.end(node))

    def peek_node(self, node: ast.AST) -> str:
        """What render_node gives, leaving the edits in place (a rule that may still leave the call as it is)."""
        start, end = self.start(node), self.end(node)
        return _apply(self.text[start:end], [e for e in self._edits if start <= e.start and e.end <= end], shift=start)

    def map_edits(self, change) -> None:
        """Rewrite the text of every edit made so far with `change` (a function of the text)."""
        for e in self._edits:
            e.text = change(e.text)

    def inside_edit(self, at: int) -> bool:
        """Does an edit made so far replace text on both sides of offset `at`?"""
        return any(e.start < at < e.end for e in self._edits)

    @property
    def edited(self) -> bool:
        return bool(self._edits)

    def result(self) -> str:
        return _apply(self.text, self._edits, shift=0)

    def skeleton(self, tree: ast.Module) -> Skeleton:
        """result(), with every statement of `tree` (this text's) that no edit touches written `pass`: where it
        holds (Skeleton.holds), the result parses. A translation touches a fraction of a file; checking its
        skeleton costs a parse of that fraction. An edit touches a statement it overlaps or inserts into; a
        decorated definition starts at its first decorator; an `elif` is kept (its own parts are not)."""
        edits = sorted(self._edits, key=_ORDER)
        starts = [e.start for e in edits]
        reach = list(itertools.accumulate((max(e.end, e.start + 1) for e in edits), max))   # an insertion: 1 char
        passes: list[Edit] = []

        def walk(body: list[ast.stmt]) -> None:
            for stmt in body:
                start, end = self.start(stmt), self.end(stmt)
                if getattr(stmt, "decorator_list", None):
                    first = stmt.decorator_list[0].lineno
                    start = self.line_start(first) + len(self.indent(first))   # the `@` opens its line
                i = bisect.bisect_left(starts, end)
                # an `elif` is no statement of its own: where its `if` changed, it must read on from it
                if i and reach[i - 1] > start or stmt.__class__ is ast.If and self.text.startswith("elif", start):
                    for inner in statement_blocks(stmt):
                        walk(inner)
                else:
                    passes.append(Edit(start, end, -1, "pass"))

        walk(tree.body)
        text, where = _apply(self.text, [*edits, *passes], shift=0, track=passes)
        lead = [self.text[self.line_start(self.lineno(e.start)):e.start] for e in passes]
        return Skeleton(text, [(at, None if before.strip() else before) for at, before in zip(where, lead)])

    def line_origins(self) -> list[int]:
        """For each line of result(), the line of this text it comes from: `origins[n - 1]` for line n. Lines
        an edit writes count as the line the edit starts on (a comment inserted above a statement: its line).

        Lets a later stage, which works on this result, report lines of the user's file."""
        origins: list[int] = []
        line_open = False   # has the result's current line been given its origin yet?

        def emit(text: str, at):   # `at`: the offset of text's first character here, or a fixed offset
            nonlocal line_open
            i = 0
            for m in [*_NEWLINE.finditer(text), None]:
                end = m.end() if m else len(text)
                if end > i and not line_open:
                    origins.append(self.lineno(at(i)))
                    line_open = True
                if m:
                    line_open, i = False, m.end()

        pos = 0
        for e in sorted(self._edits, key=_ORDER):
            if e.start > pos:
                emit(self.text[pos:e.start], lambda i, base=pos: base + i)
            emit(e.text, lambda i, at=e.start: at)
            pos = max(pos, e.end)
        emit(self.text[pos:], lambda i, base=pos: base + i)
        return origins


def _apply(text: str, edits: list[Edit], shift: int, track: list[Edit] | None = None):
    """`text` with the edits applied; with `track`, also where each of those edits' text starts in it."""
    ordered = sorted(edits, key=_ORDER)
    pieces, pos = [], 0   # the text kept before each edit, then the edit's text; last, the rest
    for e in ordered:
        start, end = e.start - shift, e.end - shift
        if start < pos:
            raise AssertionError(f"overlapping edits at offset {e.start}: {e.text!r}")  # a translator bug
        pieces += [text[pos:start], e.text]
        pos = end
    pieces.append(text[pos:])
    out = "".join(pieces)
    if track is None:
        return out
    starts, size = {}, 0
    for kept, e in zip(pieces[0::2], ordered):
        size += len(kept)
        starts[id(e)] = size
        size += len(e.text)
    return out, [starts[id(e)] for e in track]


def statement_blocks(stmt: ast.stmt):
    """The lists of statements a statement holds (a body, an else, each handler's and each case's body)."""
    for field in ("body", "orelse", "finalbody"):
        inner = getattr(stmt, field, None)
        if inner and isinstance(inner, list) and isinstance(inner[0], ast.stmt):
            yield inner
    for part in (*getattr(stmt, "handlers", ()), *getattr(stmt, "cases", ())):
        yield part.body


@dataclass
class Skeleton:
    """A text with some of its statements written `pass` (Source.skeleton): where each such `pass` starts, and the
    indentation of the statement it stands for where that opened its line (else None)."""
    text: str
    passes: list[tuple[int, str | None]]

    def holds(self) -> bool:
        """Does the skeleton parse, with each `pass` parsed as a statement where the statement it stands for
        stood: opening a logical line at its indentation for one that opened its line, after a `;` or `:` for
        another? Then the text with those statements parses too: a statement no edit touches is the same complete
        statement there, and nothing before it (an open string or bracket, a continued line) reads it otherwise."""
        try:
            with warnings.catch_warnings():   # the user's file's own warnings (invalid escapes) are not ours
                warnings.simplefilter("ignore")
                tree = ast.parse(self.text)
        except (SyntaxError, ValueError):
            return False
        found, todo = set(), [tree.body]
        while todo:
            for stmt in todo.pop():
                if stmt.__class__ is ast.Pass:
                    found.add((stmt.lineno, stmt.col_offset))
                else:
                    todo.extend(statement_blocks(stmt))
        starts = line_starts(self.text)
        for at, indent in self.passes:
            line = bisect.bisect_right(starts, at)
            before = self.text[starts[line - 1]:at]
            if (line, len(before.encode("utf-8"))) not in found:
                return False
            if indent is not None and (before != indent or _continued(self.text, starts[line - 1])):
                return False
        return True


def line_starts(text: str) -> list[int]:
    """Where each line of `text` starts, as Python counts lines ("\r\n", "\r" or "\n" ends one)."""
    if "\r" in text:
        return [0] + [m.end() for m in _NEWLINE.finditer(text)]
    starts = list(itertools.accumulate(map((1).__add__, map(len, text.split("\n"))), initial=0))   # 2.5x faster
    starts.pop()   # the last piece has no line end after it
    return starts


def _continued(text: str, line_start: int) -> bool:
    """Does the line before the one starting at `line_start` end in a backslash (go on into this one)?"""
    end = line_start
    if end and text[end - 1] == "\n":
        end -= 1
    if end and text[end - 1] == "\r":    # "\r\n", or an old Mac's "\r"
        end -= 1
    return end > 0 and text[end - 1] == "\\"
