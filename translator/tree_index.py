"""One walk of a parsed file, shared by every question the passes ask of the whole tree.

A walk over every node of a file costs about half its parse, and the passes ask many whole-tree questions (where
a class is a type, which names the file binds, its classes, each scope's bindings, what a class assigns to
self). `index(tree)` walks the tree once, in source order (pre-order, as a visitor goes), and keeps:

- the nodes of each type under the tree (`of`);
- for each def, lambda and class, the span of its subtree in that order, so that the nodes of a type inside one
  are a slice (`inside`);
- for each scope (the module, a def, a lambda), the nodes that bind names in it (`bindings`), as
  `names.Scope` reads them: not those of nested scopes, whose names are bound there, nor those of a class body.

The index is kept on the tree (the passes edit text, never the tree), so it is built once per parse.
"""
from __future__ import annotations

import ast
import bisect
import functools
import heapq
import re
from collections import defaultdict
from itertools import repeat

_SUBTREES = (ast.FunctionDef, ast.AsyncFunctionDef, ast.Lambda, ast.ClassDef)   # `inside` answers for these
# what binds a name in the scope it stands in (names.Scope._build reads each)
BINDERS = (ast.Global, ast.Nonlocal, ast.Import, ast.ImportFrom, ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef,
           ast.Assign, ast.AnnAssign, ast.AugAssign, ast.NamedExpr, ast.For, ast.AsyncFor, ast.comprehension,
           ast.withitem, ast.ExceptHandler)


class TreeIndex:
    def __init__(self, tree: ast.AST):
        found: dict[type, list] = defaultdict(list)   # type -> [node, its place in the walk, node, place, ...]
        spans: dict[int, tuple[int, int]] = {}             # id(def, lambda or class) -> its subtree's places
        bindings: dict[int, list[ast.AST]] = defaultdict(list)
        # (node, the node of the scope it binds in, or None: none) -- or (_END, a subtree that ends here)
        stack: list[tuple] = [(tree, tree)]
        pop, push, extend, plans = stack.pop, stack.append, stack.extend, _PLANS
        n = 0
        while stack:   # the hot loop of every file: plain statements, each node type's plan looked up once
            node, owner = pop()
            kind = node.__class__
            plan = plans.get(kind)
            if plan is None:
                if node is None:   # a hole in a list of nodes (a dict's `**x` key, a keyword-only arg's default)
                    continue
                if node is _END:
                    spans[id(owner)] = (spans[id(owner)], n)
                    continue
                plan = _plan(kind)
            fields, binder, owners = plan
            places = found[kind]
            places.append(node)
            places.append(n)
            n += 1
            if binder and owner is not None:
                bindings[id(owner)].append(node)
            if owners is None:   # the children bind where the node does; last field first, so the stack gives
                for field, shape in fields:   # them back in order
                    value = getattr(node, field, None)
                    if shape is _MANY:
                        if value:
                            extend(zip(reversed(value), repeat(owner)))
                    elif shape is _ONE:
                        if value is not None:
                            push((value, owner))
                    else:
                        _push_any(push, value, owner)
            else:   # a def, lambda or class: its own body (not a class's) binds in it, its other fields nowhere
                spans[id(node)] = n
                push((_END, node))
                for (field, _), own in zip(fields, owners):
                    _push_any(push, getattr(node, field, None), node if own else None)
        del found[tree.__class__][:2]   # the tree holds its index: holding the tree would make a cycle
        if not found[tree.__class__]:
            del found[tree.__class__]
        self._nodes = {kind: places[0::2] for kind, places in found.items()}
        self._order = {kind: places[1::2] for kind, places in found.items()}
        self._spans, self._bindings, self._size = spans, bindings, n

    def of(self, *types: type) -> list[ast.AST]:
        """The nodes of these exact types (not subclasses), in source order."""
        return self._merged(types, 0, self._size)

    def inside(self, node: ast.AST, *types: type) -> list[ast.AST]:
        """The nodes of these types inside a def, lambda or class of the tree (not the node itself), in source
        order."""
        return self._merged(types, *self._spans[id(node)])

    def under(self, node: ast.AST, *types: type) -> list[ast.AST]:
        """`inside` for a def, lambda or class of the tree; for the tree itself (a module), every node of
        these types."""
        return self.of(*types) if isinstance(node, ast.Module) else self.inside(node, *types)

    def own(self, node: ast.AST, types: tuple, skip: tuple) -> list[ast.AST]:
        """The nodes of `types` inside a def, lambda or class of the tree, less those inside a nested node of the
        `skip` types, in source order."""
        start, end = self._spans[id(node)]
        found, at = [], start
        for hole_start, hole_end in sorted(self._spans[id(n)] for n in self._merged(skip, start, end)):
            if hole_start > at:   # the nested node's own place is before its span: it is of a skip type anyway
                found += self._merged(types, at, hole_start)
            at = max(at, hole_end)
        return found + self._merged(types, at, end)

    def span(self, node: ast.AST) -> tuple[int, int]:
        """The places of a def's, lambda's or class's subtree in the walk: `inner`'s lies within `outer`'s if and
        only if `inner` is inside `outer`."""
        return self._spans[id(node)]

    def _merged(self, types, start: int, end: int) -> list[ast.AST]:
        runs = []   # (their places, the nodes) of each type between start and end
        for t in types:
            order = self._order.get(t)
            if order:
                a, b = bisect.bisect_left(order, start), bisect.bisect_left(order, end)
                runs.append((order[a:b], self._nodes[t][a:b]))
        if len(runs) <= 1:   # one type: its nodes are in order already
            return runs[0][1] if runs else []
        return [node for _, node in heapq.merge(*(zip(*run) for run in runs), key=lambda pair: pair[0])]

    def bindings(self, scope: ast.AST) -> list[ast.AST]:
        """The nodes that bind names in a scope (the module, a def or a lambda), in source order."""
        return self._bindings.get(id(scope), [])


_PLANS: dict[type, tuple] = {}
_LEAVES = ("ctx", "op", "ops")   # fields that hold only a context or an operator: nothing asks for them
_END = object()                  # on the walk's stack: the subtree of the def, lambda or class beside it ends here
_ONE, _MANY, _ANY = "one", "many", "any"   # a field holds a node or None / a list of nodes / not known: look
# the grammar's types of fields that never hold a node (ast.Name.__doc__ is "Name(identifier id, expr_context ctx)")
_NOT_NODES = frozenset({"identifier", "string", "constant", "int"})


@functools.lru_cache(maxsize=None)
def child_fields(kind: type) -> tuple[str, ...]:
    """The fields of a node type that may hold nodes anyone visits, in order (not contexts nor operators)."""
    return tuple(f for f in kind._fields if f not in _LEAVES)


@functools.lru_cache(maxsize=None)
def node_fields(kind: type) -> tuple[tuple[str, bool | None], ...]:
    """child_fields less those the grammar says never hold a node (a name, a constant), each with whether it
    holds a list of nodes (None: the grammar does not say)."""
    shapes = _shapes(kind)
    return tuple((f, None if f not in shapes else shapes[f] is _MANY) for f in child_fields(kind)
                 if shapes.get(f, _ANY) is not None)


def _shapes(kind: type) -> dict[str, str | None]:
    """What each field of a node type holds, read from the grammar line Python gives as the type's docstring: _ONE,
    _MANY, or None for no node; a field the line does not give (or a docstring in another form) is left out."""
    match = re.fullmatch(r"\w+\((.*)\)", (kind.__doc__ or "").strip())
    shapes: dict[str, str | None] = {}
    for part in match.group(1).split(", ") if match and match.group(1) else ():
        grammar_type, _, field = part.rpartition(" ")
        shapes[field] = None if grammar_type.rstrip("?*") in _NOT_NODES else _MANY if grammar_type.endswith("*") \
            else _ONE
    return shapes


def _plan(kind: type) -> tuple:
    """(its fields that may hold nodes with their shapes, last first; whether it binds names; for a def, lambda or
    class, whether each field is in its own scope, else None)."""
    shapes = _shapes(kind)
    fields = tuple((f, shapes.get(f, _ANY)) for f in reversed(child_fields(kind)) if shapes.get(f, _ANY) is not None)
    owners = None
    if issubclass(kind, _SUBTREES):
        owners = tuple(f == "body" and not issubclass(kind, ast.ClassDef) for f, _ in fields)
    _PLANS[kind] = plan = (fields, issubclass(kind, BINDERS), owners)
    return plan


def _push_any(push, value, owner) -> None:
    """Push a field's node, or its list's nodes last first, whatever it holds."""
    if value.__class__ is list:
        for v in reversed(value):
            if isinstance(v, ast.AST):
                push((v, owner))
    elif isinstance(value, ast.AST):
        push((value, owner))


def built(tree: ast.AST) -> TreeIndex | None:
    """The tree's index if it was built already, else None."""
    return getattr(tree, "_recompat_index", None)


def index(tree: ast.AST) -> TreeIndex:
    """The tree's index, built on first use."""
    found = getattr(tree, "_recompat_index", None)
    if found is None:
        found = tree._recompat_index = TreeIndex(tree)
    return found
