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
from collections import defaultdict

_SUBTREES = (ast.FunctionDef, ast.AsyncFunctionDef, ast.Lambda, ast.ClassDef)   # `inside` answers for these
# what binds a name in the scope it stands in (names.Scope._build reads each)
BINDERS = (ast.Global, ast.Nonlocal, ast.Import, ast.ImportFrom, ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef,
           ast.Assign, ast.AnnAssign, ast.AugAssign, ast.NamedExpr, ast.For, ast.AsyncFor, ast.comprehension,
           ast.withitem, ast.ExceptHandler)


class TreeIndex:
    def __init__(self, tree: ast.AST):
        nodes: dict[type, list[ast.AST]] = defaultdict(list)
        order: dict[type, list[int]] = defaultdict(list)   # each node's place in the walk, beside `nodes`
        spans: dict[int, tuple[int, int]] = {}             # id(def, lambda or class) -> its subtree's places
        bindings: dict[int, list[ast.AST]] = defaultdict(list)
        # (node, the node of the scope it binds in, or None: none) -- or (None, a subtree that ends here)
        stack: list[tuple] = [(tree, tree)]
        pop, push = stack.pop, stack.append
        n = 0
        while stack:   # the hot loop of every file: plain statements, each node's plan looked up once
            node, owner = pop()
            if node is None:
                spans[id(owner)] = (spans[id(owner)][0], n)
                continue
            kind = node.__class__
            fields, binder, owners = _PLANS.get(kind) or _plan(kind)
            if node is not tree:   # the tree holds its index: holding the tree would make a cycle only gc frees
                nodes[kind].append(node)
                order[kind].append(n)
            n += 1
            if binder and owner is not None:
                bindings[id(owner)].append(node)
            if owners is not None:   # a def, lambda or class: its own body (not a class's) binds in it
                spans[id(node)] = (n, n)
                push((None, node))
            for i, field in enumerate(fields):   # last field first: the stack gives them back in order
                value = getattr(node, field, None)
                inner = owner if owners is None else node if owners[i] else None
                if value.__class__ is list:
                    for v in reversed(value):
                        if isinstance(v, ast.AST):
                            push((v, inner))
                elif isinstance(value, ast.AST):
                    push((value, inner))
        self._nodes, self._order, self._spans, self._bindings, self._size = nodes, order, spans, bindings, n

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


@functools.lru_cache(maxsize=None)
def child_fields(kind: type) -> tuple[str, ...]:
    """The fields of a node type that may hold nodes anyone visits, in order (not contexts nor operators)."""
    return tuple(f for f in kind._fields if f not in _LEAVES)


def _plan(kind: type) -> tuple:
    """(its fields that may hold nodes, last first; whether it binds names; for a def, lambda or class, whether each
    field is in its own scope, else None)."""
    fields = child_fields(kind)[::-1]
    owners = None
    if issubclass(kind, _SUBTREES):
        owners = tuple(f == "body" and not issubclass(kind, ast.ClassDef) for f in fields)
    _PLANS[kind] = plan = (fields, issubclass(kind, BINDERS), owners)
    return plan


def built(tree: ast.AST) -> TreeIndex | None:
    """The tree's index if it was built already, else None."""
    return getattr(tree, "_recompat_index", None)


def index(tree: ast.AST) -> TreeIndex:
    """The tree's index, built on first use."""
    found = getattr(tree, "_recompat_index", None)
    if found is None:
        found = tree._recompat_index = TreeIndex(tree)
    return found
