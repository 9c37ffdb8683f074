"""Edits both directions make: removing call arguments, deleting statements, settling imports.

Everything works on a Source (span edits on ast positions); nothing here knows a framework.
"""
from __future__ import annotations

import ast
import re
from collections import defaultdict

from recompat.translator import names, tree_index
from recompat.translator.source import Source, statement_blocks


def _comma(text: str, start: int, end: int) -> int | None:
    """Offset of the first comma in text[start:end] outside comments (the text between two arguments)."""
    i = start
    while i < end:
        if text[i] == "#":
            i = text.find("\n", i, end)
            if i < 0:
                return None
        elif text[i] == ",":
            return i
        i += 1
    return None


def append_keywords(src: Source, call: ast.Call, texts: list[str], dropped=()) -> ast.keyword | None:
    """Add `name=value` keywords (`texts`) at the end of a call whose `dropped` arguments are going.

    A call that also passes `**mapping` gets them as defaults under it, `**{"name": value, **mapping}`: the
    mapping may hold them, and a keyword given twice is a TypeError. Returns that `**` keyword, or None."""
    splat = next((kw for kw in call.keywords if kw.arg is None and kw not in dropped), None)
    if splat is None:
        last = max((n for n in [*call.args, *call.keywords] if n not in dropped),
                   key=lambda n: (n.end_lineno, n.end_col_offset))
        src.insert(src.end(last), "".join(f", {text}" for text in texts))
        return None
    value = src.segment(splat)[2:].lstrip()   # with the parentheses it may have
    if value == src.segment(splat.value) and not isinstance(
            splat.value, (ast.Name, ast.Attribute, ast.Call, ast.Subscript, ast.Dict)):
        value = f"({value})"
    defaults = ", ".join('"{}": {}'.format(*text.split("=", 1)) for text in texts)
    src.replace(src.start(splat), src.end(splat), f"**{{{defaults}, **{value}}}")
    return splat


def remove_arguments(src: Source, call: ast.Call, dropped: list) -> None:
    """Delete arguments, leaving the others' text and comments as they are.

    Each takes its own comma: the one after it, or the one before it when no kept argument follows
    (and the call has no trailing comma). One that stands on lines of its own takes those lines,
    its own trailing comment included."""
    text = src.text
    nodes = sorted([*call.args, *call.keywords], key=lambda n: (n.lineno, n.col_offset))
    close = src.end(call) - 1
    trailing_comma = _comma(text, src.end(nodes[-1]), close) is not None
    removed_to = 0   # where the previous removal ended
    for i, node in enumerate(nodes):
        if node not in dropped:
            continue
        start, end = src.start(node), src.end(node)
        before_comma = None
        if trailing_comma or any(n not in dropped for n in nodes[i + 1:]):
            end = _comma(text, end, src.start(nodes[i + 1]) if i + 1 < len(nodes) else close) + 1
        elif i > 0:
            before_comma = _comma(text, src.end(nodes[i - 1]), start)
        line_start = src.line_start(node.lineno)
        line_end = src.line_end(src.lineno(end))
        before = text[line_start:start]
        after = text[end:line_end].rstrip("\r\n")
        if not before.strip() and (not after.strip() or after.lstrip().startswith("#")):
            start, end = line_start, line_end            # its own lines
        elif before_comma is not None and "#" not in text[before_comma:start]:
            start, before_comma = before_comma, None     # `, arg` up to the closing parenthesis
        elif not after.strip():                          # no trailing whitespace left behind
            start = max(len(text[:start].rstrip(" \t")), removed_to)
        else:
            end += len(after) - len(after.lstrip(" \t"))
        if before_comma is not None:
            src.replace(before_comma, before_comma + 1, "")
        # edits inside the argument go with it (a checkpoint call in the dropped value); an insertion at the
        # removed span's edge belongs to its neighbour (the `)` closing a size tuple made of the arguments before)
        src.render(src.start(node), src.end(node))
        src.replace(start, end, "")
        removed_to = end


def settle_imports(src: Source, tree: ast.Module, *, modules: set[str], exact: set[str] = frozenset(),
                   additions: list[tuple[str, str | None]] = ()) -> None:
    """Remove the imports of `modules` (and of what is under them) and of `exact` that nothing uses any more,
    then add each `(module, alias)` of `additions` not imported yet: where the first removed top-level import
    was, as its replacement, else after the module's leading imports."""
    imports = names.imports(tree)

    def ours(qual: str | None) -> bool:
        return qual is not None and (under(qual, modules) or qual in exact)

    candidates = {name for s in imports for name, q, a in names.import_bindings(s)
                  if ours(q) or (isinstance(s, ast.Import) and ours(a.name))}
    removed_at = None
    if candidates:
        used, import_scope = names.binding_uses(tree, candidates)
        dotted = {".".join(c) for n in tree_index.index(tree).of(ast.Attribute)
                  for c in [names.attribute_chain(n)] if c} if any(
            isinstance(s, ast.Import) and not a.asname and "." in a.name
            for s in imports for a in s.names) else set()
        bound_roots = defaultdict(int)
        for s in imports:
            for name, _, _ in names.import_bindings(s):
                bound_roots[name] += 1

        def removable(stmt, name, qual, alias):
            if isinstance(stmt, ast.Import) and not alias.asname:
                qual = alias.name     # `import torch.utils.checkpoint` binds `torch` but imports the module
            if not ours(qual):
                return False
            is_used = (import_scope[id(stmt)], name) in used
            if name != qual:
                return not is_used
            return not any(d == qual or d.startswith(qual + ".") for d in dotted) and (
                bound_roots[name] > 1 or not is_used)

        for stmt in imports:
            bindings = names.import_bindings(stmt)
            gone = [a for name, qual, a in bindings if removable(stmt, name, qual, a)]
            if not gone:
                continue
            if len(gone) == len(stmt.names):
                if removed_at is None and stmt in tree.body:
                    removed_at = stmt
                delete_statement(src, tree, stmt)
            else:
                kept = [a for a in stmt.names if a not in gone]
                src.replace_node(stmt, import_text(stmt, [src.segment(a) for a in kept]))
    present = {(a.name, a.asname) for s in imports if isinstance(s, ast.Import) for a in s.names}
    missing = [f"import {m}" if alias is None else f"import {m} as {alias}"
               for m, alias in additions if (m, alias) not in present]
    if missing:
        if removed_at is not None:
            src.insert(src.line_start(removed_at.lineno), "\n".join(missing) + "\n")
        else:
            src.insert(after_imports(src, tree), "\n".join(missing) + "\n")


def comment_above(src: Source, stmt: ast.stmt, comment: str, done: set) -> None:
    """Put `comment` on a line of its own above `stmt`, once per statement (`done` remembers), and not again
    when the comment lines just above already hold it (translating the output again changes nothing)."""
    _comment_above_line(src, stmt.lineno, comment, done)


def _comment_above_line(src: Source, lineno: int, comment: str, done: set) -> None:
    above, n = set(), lineno - 1
    while n >= 1 and src.line(n).lstrip().startswith("#"):
        above.add(src.line(n).strip())
        n -= 1
    if comment not in above and (lineno, comment) not in done:
        done.add((lineno, comment))
        src.insert(src.line_start(lineno), src.indent(lineno) + comment + "\n")


def comment_manual_sites(src: Source, tree: ast.Module, sites) -> None:
    """A `# recompat: CODE message` line above the statement of each manual diagnostic of `sites` (lines of
    `src`, whose tree is `tree`), once per statement and message: what is left by hand is marked where it is, not
    only in the report. A statement an edit rewrites around that line keeps its text as the edit makes it."""
    done: set = set()
    for site in sites:
        for d in site.diagnostics:
            line = _statement_line(tree.body, d.line) if d.status == "manual" else None
            if line is not None and not src.inside_edit(src.line_start(line)):
                _comment_above_line(src, line, f"# recompat: {d.code} {' '.join(d.message.split())}", done)


def _statement_line(body: list[ast.stmt], line: int) -> int | None:
    """The first line (a decorator's, where it has one) of the innermost statement of `body` holding `line`."""
    for stmt in body:
        first = names.first_line(stmt)
        if first <= line <= stmt.end_lineno:
            inner = [_statement_line(block, line) for block in statement_blocks(stmt)]
            return next((n for n in inner if n is not None), first)
    return None


def under(qual: str, modules) -> bool:
    return any(qual == m or qual.startswith(m + ".") for m in modules)


def import_text(stmt, aliases: list[str]) -> str:
    """The import statement `stmt` with only these of its names (each as its text: `nn`, `numpy as np`)."""
    parts = ", ".join(aliases)
    if isinstance(stmt, ast.Import):
        return f"import {parts}"
    return f"from {'.' * stmt.level}{stmt.module or ''} import {parts}"


def delete_statement(src: Source, tree: ast.Module, stmt: ast.stmt) -> None:
    """Delete a whole statement with its line; `pass` where it is the last statement of a block to go (the others
    deleted before it), so no block is left empty."""
    parent_body = block_of(tree, stmt)
    line = src.line(stmt.lineno)
    whole_line = line.strip() == src.segment(stmt).strip() and stmt.lineno == stmt.end_lineno or (
        line[:stmt.col_offset].strip() == "" and src.line(stmt.end_lineno)[stmt.end_col_offset:].strip() == "")
    start, end = src.start(stmt), src.end(stmt)
    after = re.match(r"[ \t]*;[ \t]*", src.text[end:])
    before = src.text[src.line_start(stmt.lineno):start].rstrip(" \t")
    if parent_body is not None and parent_body is not tree.body and all(
            s is stmt or id(s) in src.deleted for s in parent_body):
        src.replace_node(stmt, "pass")
        return
    src.deleted.add(id(stmt))
    if whole_line:
        end = src.line_end(stmt.end_lineno)
        if parent_body is not None and parent_body[0] is stmt and parent_body is not tree.body:
            while end < len(src.text) and not src.line(src.lineno(end)).strip():
                end = src.line_end(src.lineno(end))   # a block opening with blank lines: they go too
        src.replace(src.line_start(stmt.lineno), end, "")
    elif after:     # `a; stmt; b` -> `a; b`
        src.replace(start, end + after.end(), "")
    elif before.endswith(";"):   # `a; stmt` -> `a`
        src.replace(src.line_start(stmt.lineno) + len(before) - 1, end, "")
    else:
        src.replace_node(stmt, "pass")


def block_of(tree: ast.Module, stmt: ast.stmt) -> list[ast.stmt] | None:
    """The list of statements that holds `stmt`, found down the statements whose lines hold its first line."""
    todo = [tree.body]
    while todo:
        body = todo.pop()
        for s in body:
            if s is stmt:
                return body
            if s.lineno <= stmt.lineno <= s.end_lineno:
                todo += [b for f in ("body", "orelse", "finalbody") if isinstance(b := getattr(s, f, None), list)]
                todo += [h.body for h in (*getattr(s, "handlers", ()), *getattr(s, "cases", ()))]
    return None


def after_imports(src: Source, tree: ast.Module) -> int:
    """Just past the module's leading run of imports (after the docstring and __future__)."""
    last = None
    for stmt in tree.body:
        if isinstance(stmt, (ast.Import, ast.ImportFrom)):
            last = stmt
        elif isinstance(stmt, ast.Expr) and isinstance(stmt.value, ast.Constant) and last is None:
            last = stmt if stmt is tree.body[0] else last
        elif isinstance(stmt, ast.Try) and all(isinstance(s, (ast.Import, ast.ImportFrom)) for s in stmt.body):
            last = stmt
        else:
            break
    if last is None:
        return 0
    return src.line_end(last.end_lineno)
