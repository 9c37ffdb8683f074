"""What a name really is: imports resolved to qualified names, scopes, and what we can tell
statically about callables (is it a Cell/Module instance, a function, or unknown?).

Resolved by hand from the ast: libcst's scope metadata costs about ten times a parse (measured:
78.6 s against 8.3 s for 100,000 lines of a vision-model library),
and a checkpoint translator needs only imports, local shadowing and a few class facts.
"""
from __future__ import annotations

import ast
from collections.abc import Callable
import functools

from recompat.translator import tree_index


@functools.lru_cache(maxsize=None)
def containers() -> frozenset[str]:
    """Class names of containers of modules/cells, in either framework (mappings/frameworks.yaml)."""
    from recompat import mappings

    return mappings.default().containers


CELL, CONTAINER, FUNCTION, CLASS, UNKNOWN = "cell", "container", "function", "class", "unknown"


def import_bindings(stmt: ast.stmt) -> list[tuple[str, str | None, ast.alias]]:
    """(bound name, qualified name or None for relative imports, alias node) of an import."""
    out = []
    if isinstance(stmt, ast.Import):
        for a in stmt.names:
            if a.asname:
                out.append((a.asname, a.name, a))
            else:
                root = a.name.split(".")[0]
                out.append((root, root, a))
    elif isinstance(stmt, ast.ImportFrom):
        module = stmt.module if not stmt.level else getattr(stmt, "resolved_module", None)
        for a in stmt.names:
            if a.name == "*":
                continue
            qual = f"{module}.{a.name}" if module else None
            out.append((a.asname or a.name, qual, a))
    return out


def star_bindings(stmt: ast.stmt) -> list[tuple[str, str, ast.alias]]:
    """What `from m import *` binds where the tree's module m is known (bind_star_imports): (name, qualified name,
    the `*` alias); nothing for any other statement, or a module outside the tree."""
    bound = getattr(stmt, "star_names", None)
    return [(name, qual, stmt.names[0]) for name, qual in bound.items()] if bound else []


def bind_star_imports(tree: ast.Module, exports) -> None:
    """Give each `from m import *` whose module the tree holds what it binds (`exports`: module -> {name:
    qualified name}, project.star_exports), read by star_bindings. The text is not changed."""
    for node in imports(tree):
        if isinstance(node, ast.ImportFrom) and node.names[0].name == "*":
            module = node.module if not node.level else getattr(node, "resolved_module", None)
            if module in exports:
                node.star_names = exports[module]


def import_statement(name: str, qual: str) -> str:
    """The import that binds `name` to `qual` (nn, torch.nn -> from torch import nn)."""
    if qual == name:
        return f"import {name}"
    head, _, tail = qual.rpartition(".")
    if not head:
        return f"import {qual} as {name}"
    return f"from {head} import {tail}" + (f" as {name}" if tail != name else "")


def imports(tree: ast.Module) -> list:
    """The import statements of a module, in source order: from its index where it has one, else from a walk of
    its statements only (a tenth of its nodes: the translation's output is asked for nothing else)."""
    index = tree_index.built(tree)
    if index is not None:
        return index.of(ast.Import, ast.ImportFrom)
    found, todo = [], list(reversed(tree.body))
    while todo:
        node = todo.pop()
        if isinstance(node, (ast.Import, ast.ImportFrom)):
            found.append(node)
        for field in ("cases", "finalbody", "orelse", "handlers", "body"):   # the blocks, last first
            block = getattr(node, field, None)
            if isinstance(block, list):
                todo.extend(reversed(block))
    return found


def resolve_relative_imports(tree: ast.Module, package: str | None) -> ast.Module:
    """Give each relative `from . import x` of a module in `package` (dotted; None: not known) the absolute module
    it imports from (`resolved_module`, read by import_bindings). The text is not changed."""
    if package:
        parts = package.split(".")
        for node in tree_index.index(tree).of(ast.ImportFrom):   # every pass asks the index: built now, once
            if node.level and node.level <= len(parts):
                base = parts[:len(parts) - node.level + 1]
                node.resolved_module = ".".join([*base, *([node.module] if node.module else [])])
    return tree


def _target_names(target: ast.AST):
    if isinstance(target, ast.Name):
        yield target.id
    elif isinstance(target, (ast.Tuple, ast.List)):
        for t in target.elts:
            yield from _target_names(t)
    elif isinstance(target, ast.Starred):
        yield from _target_names(target.value)


def _callee_name(call: ast.AST) -> str | None:
    if isinstance(call, ast.Call):
        f = call.func
        if isinstance(f, ast.Name):
            return f.id
        if isinstance(f, ast.Attribute):
            return f.attr
    return None


def value_kind(value: ast.AST, kinds: dict[str, str] | None = None) -> str:
    """What an assigned value is: a Cell (a class instantiated), a container of Cells, a function."""
    if isinstance(value, ast.Lambda):
        return FUNCTION
    if isinstance(value, (ast.List, ast.Tuple)) and value.elts:
        return CONTAINER if all(value_kind(e, kinds) == CELL for e in value.elts) else UNKNOWN
    if isinstance(value, ast.ListComp):
        return CONTAINER if value_kind(value.elt, kinds) == CELL else UNKNOWN
    name = _callee_name(value)
    if name in containers():
        return CONTAINER
    if name and name[0].isupper() and not name.isupper():
        return CELL  # a class being instantiated; models are built from such calls
    if isinstance(value, ast.Name) and kinds:
        return kinds.get(value.id, UNKNOWN)
    return UNKNOWN


class Scope:
    """Names bound in one function (or the module): their kinds and, for imports, qualified names.

    Built on first use: most functions of a file never need their bindings resolved."""

    def __init__(self, node: ast.AST, parent: Scope | None, class_attrs=None):
        self.node, self.parent = node, parent
        if class_attrs is None:   # nested functions see the method's self
            class_attrs = parent._class_attrs if parent is not None else dict
        self.index = parent.index if parent is not None else tree_index.index(node)
        self._class_attrs = class_attrs         # () -> what self.X is, in a method (computed on demand)
        self._kinds: dict[str, str] | None = None
        self._imports: dict[str, str | None] = {}
        self._imported: dict[str, set[str]] = {}   # every qualified name an import binds a name to
        self._other: set[str] = set()           # bound by anything other than an import

    @property
    def class_attrs(self) -> dict[str, str]:
        return self._class_attrs()

    @property
    def kinds(self) -> dict[str, str]:
        if self._kinds is None:
            self._kinds = {}   # set first: building looks names up in this very scope
            self._build()
        return self._kinds

    @property
    def imports(self) -> dict[str, str | None]:
        self.kinds
        return self._imports

    @property
    def other(self) -> set[str]:
        self.kinds
        return self._other

    def bind(self, name: str, kind: str) -> None:
        old = self._kinds.get(name)
        self._kinds[name] = kind if old in (None, kind) else UNKNOWN
        self._other.add(name)

    def lookup(self, name: str) -> Scope | None:
        scope = self
        while scope is not None:   # the hot path of every name looked up: the fields, not the properties
            kinds = scope._kinds if scope._kinds is not None else scope.kinds
            if name in kinds or name in scope._imports:
                return scope
            scope = scope.parent
        return None

    def qualname(self, name: str) -> str | None:
        """Qualified name of an imported name, when no other binding in its scope competes."""
        scope = self.lookup(name)
        if scope is None or name in scope._other:   # lookup built it
            return None
        return scope._imports.get(name)

    def shadowed_imports(self, name: str) -> set[str]:
        """What imports bind `name` to where something else binds it too (so `qualname` gives None):
        `try: from m import f` / `except ImportError: f = None`."""
        scope = self.lookup(name)
        if scope is None or name not in scope.other:
            return set()
        return scope._imported.get(name, set())

    def _build(self) -> None:
        """Collect the bindings of the body (not of nested scopes, whose names are bound here)."""
        node = self.node
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.Lambda)):
            a = node.args
            for arg in [*a.posonlyargs, *a.args, a.vararg, *a.kwonlyargs, a.kwarg]:
                if arg is not None:
                    self.bind(arg.arg, UNKNOWN)
        declared_global: set[str] = set()
        for child in self.index.bindings(node):
            if isinstance(child, (ast.Global, ast.Nonlocal)):
                declared_global.update(child.names)
            elif isinstance(child, (ast.Import, ast.ImportFrom)):
                for name, qual, _ in [*import_bindings(child), *star_bindings(child)]:
                    if name in self._imports and self._imports[name] != qual:
                        self._other.add(name)   # two different imports: ambiguous
                    self._imports[name] = qual
                    if qual:
                        self._imported.setdefault(name, set()).add(qual)
            elif isinstance(child, (ast.FunctionDef, ast.AsyncFunctionDef)):
                self.bind(child.name, FUNCTION)
            elif isinstance(child, ast.ClassDef):
                self.bind(child.name, CLASS)
            elif isinstance(child, ast.Assign):
                kind = value_kind(child.value, self._kinds)
                for t in child.targets:
                    for n in _target_names(t):
                        self.bind(n, kind if isinstance(t, ast.Name) else UNKNOWN)
            elif isinstance(child, (ast.AnnAssign, ast.AugAssign, ast.NamedExpr)):
                value = getattr(child, "value", None)
                for n in _target_names(child.target):
                    self.bind(n, value_kind(value, self._kinds) if value is not None else UNKNOWN)
            elif isinstance(child, (ast.For, ast.AsyncFor, ast.comprehension)):
                _bind_loop(self, child.target, child.iter)
            elif isinstance(child, ast.withitem) and child.optional_vars is not None:
                for n in _target_names(child.optional_vars):
                    self.bind(n, UNKNOWN)
            elif isinstance(child, ast.ExceptHandler) and child.name:
                self.bind(child.name, UNKNOWN)
        for name in declared_global:
            self._kinds.pop(name, None)
            self._imports.pop(name, None)
            self._imported.pop(name, None)
            self._other.discard(name)


def build_scope(node: ast.AST, parent: Scope | None, class_attrs=None) -> Scope:
    """The scope of a module, function or lambda body; for a method, `class_attrs` is a function
    returning what self.X is in its class (see class_attrs below)."""
    return Scope(node, parent, class_attrs)


def _bind_loop(scope: Scope, target: ast.AST, iterable: ast.AST) -> None:
    """`for blk in self.blocks` / `for i, blk in enumerate(self.blocks)`: items of a container are Cells."""
    container = iterable
    if isinstance(iterable, ast.Call) and _callee_name(iterable) == "enumerate" and iterable.args:
        container = iterable.args[0]
        if isinstance(target, ast.Tuple) and len(target.elts) == 2:
            for n in _target_names(target.elts[0]):
                scope.bind(n, UNKNOWN)
            target = target.elts[1]
    item_kind = CELL if scope_container_kind(scope, container) == CONTAINER else UNKNOWN
    for n in _target_names(target):
        scope.bind(n, item_kind if isinstance(target, ast.Name) else UNKNOWN)


def scope_container_kind(scope: Scope, expr: ast.AST) -> str:
    """Kind of an expression iterated over: a local container, or `self.attr` via the class facts."""
    if isinstance(expr, ast.Subscript):  # self.layers[:k]
        return scope_container_kind(scope, expr.value)
    if isinstance(expr, ast.Call) and _callee_name(expr) in ("children", "cells", "values"):
        return CONTAINER
    if isinstance(expr, ast.Name):
        found = scope.lookup(expr.id)
        return found.kinds.get(expr.id, UNKNOWN) if found else UNKNOWN
    if isinstance(expr, ast.Attribute) and isinstance(expr.value, ast.Name) and expr.value.id == "self":
        return scope.class_attrs.get(expr.attr, UNKNOWN)
    return value_kind(expr)


def class_attrs(cls: ast.ClassDef, index: tree_index.TreeIndex) -> dict[str, str]:
    """What `self.X` is inside a class (of the tree `index` indexes): methods, Cells and containers assigned in any
    method."""
    attrs: dict[str, str] = {}

    def bind(name, kind):
        old = attrs.get(name)
        attrs[name] = kind if old in (None, kind) else UNKNOWN

    for stmt in cls.body:
        if isinstance(stmt, (ast.FunctionDef, ast.AsyncFunctionDef)):
            bind(stmt.name, FUNCTION)
    for stmt in cls.body:
        if not isinstance(stmt, (ast.FunctionDef, ast.AsyncFunctionDef)):
            continue
        for node in index.inside(stmt, ast.Assign, ast.AnnAssign):
            if node.value is not None:
                targets = node.targets if isinstance(node, ast.Assign) else [node.target]
                for t in targets:
                    if is_self_attr(t):
                        bind(t.attr, value_kind(node.value))
    return attrs


def is_self_attr(node: ast.AST) -> bool:
    return isinstance(node, ast.Attribute) and isinstance(node.value, ast.Name) and node.value.id == "self"


def first_line(stmt: ast.stmt) -> int:
    """A statement's first line: its first decorator's, where it has one."""
    return min([stmt.lineno, *(d.lineno for d in getattr(stmt, "decorator_list", ()))])


def attribute_chain(node: ast.AST) -> list[str] | None:
    """`a.b.c` -> ['a', 'b', 'c']; None for anything that is not a plain dotted name."""
    parts = []
    while isinstance(node, ast.Attribute):
        parts.append(node.attr)
        node = node.value
    if not isinstance(node, ast.Name):
        return None
    parts.append(node.id)
    return parts[::-1]


def binding_uses(tree: ast.Module, of: set[str]) -> tuple[set[tuple[int, str]], dict[int, int]]:
    """Which bindings of the names `of` are read: {(id of the binding scope's node, name)}, and the scope (node id)
    each import statement binds into. A function's own variable named like an import does not keep
    a module-level import alive, and a function-level import is judged inside its function."""
    used: set[tuple[int, str]] = set()
    import_scope: dict[int, int] = {}
    module = build_scope(tree, None)

    todo = [(tree, module)]   # a stack, not a nested function that calls itself: that would make a reference cycle
    while todo:
        node, scope = todo.pop()
        for child in ast.iter_child_nodes(node):
            if isinstance(child, (ast.FunctionDef, ast.AsyncFunctionDef, ast.Lambda)):
                args = child.args
                for d in [*args.defaults, *args.kw_defaults, *getattr(child, "decorator_list", [])]:
                    if d is not None:
                        todo.append((ast.Expression(body=d), scope))
                todo.append((child, build_scope(child, scope)))
            elif isinstance(child, ast.Name) and isinstance(child.ctx, ast.Load):
                if child.id in of:
                    found = scope.lookup(child.id) or module
                    used.add((id(found.node), child.id))
            else:
                if isinstance(child, (ast.Import, ast.ImportFrom)):
                    import_scope[id(child)] = id(scope.node)
                todo.append((child, scope))
    for name in string_annotation_names(tree) & of:   # `Optional["CheckpointWrapper"]` (under TYPE_CHECKING too)
        used.add((id((module.lookup(name) or module).node), name))
    return used, import_scope


def string_annotation_names(tree: ast.Module) -> set[str]:
    """Names that annotations written as strings read: `x: "Optional[Wrapper]"`, `Optional["Wrapper"]`."""
    index = tree_index.index(tree)
    annotations = [n.annotation for n in index.of(ast.arg, ast.AnnAssign)]
    annotations += [n.returns for n in index.of(ast.FunctionDef, ast.AsyncFunctionDef)]
    found = set()
    for annotation in filter(None, annotations):
        for node in ast.walk(annotation):
            if isinstance(node, ast.Constant) and isinstance(node.value, str):
                try:
                    parsed = ast.parse(node.value.strip(), mode="eval")
                except (SyntaxError, ValueError):
                    continue
                found |= {n.id for n in ast.walk(parsed) if isinstance(n, ast.Name)}
    return found


# walker class -> node class -> (its visit function, is the node a statement): plain functions, kept apart from the
# walkers, whose bound methods would make cycles
_DISPATCH: dict[type, dict[type, tuple[Callable, bool]]] = {}


class ScopedWalker(ast.NodeVisitor):
    """Walks a module keeping what encloses each node: its scope, class, function and statement.

    Subclasses add visit_Call and friends; scopes are built lazily (see Scope)."""

    _removed: set[int] | frozenset = frozenset()   # id() of nodes a translation removed whole: not walked

    def __init__(self):
        self._dispatch = _DISPATCH.setdefault(self.__class__, {})
        self.scope: Scope | None = None
        self.cls: ast.ClassDef | None = None
        self.func: ast.FunctionDef | ast.AsyncFunctionDef | None = None
        self.stmt: ast.stmt | None = None

    def visit(self, node):
        if self._removed and id(node) in self._removed:
            return
        plan = self._dispatch.get(node.__class__)
        if plan is None:   # ast.NodeVisitor's lookup, once per node type (it builds the name for every node)
            kind = node.__class__
            plan = self._dispatch[kind] = (getattr(self.__class__, "visit_" + kind.__name__,
                                                   self.__class__.generic_visit), issubclass(kind, ast.stmt))
        method, is_stmt = plan
        if is_stmt:
            outer, self.stmt = self.stmt, node
            method(self, node)
            self.stmt = outer
        else:
            method(self, node)

    def generic_visit(self, node):
        dispatch, visit, removed = self._dispatch, self.visit, self._removed
        for field, many in tree_index.node_fields(node.__class__):
            value = getattr(node, field, None)
            if many is None:               # a field the grammar does not describe: look
                for item in value if value.__class__ is list else [value]:
                    if isinstance(item, ast.AST):
                        visit(item)
                continue
            for item in value if many else (value,):
                # None: a hole (a dict's `**x` key); a constant: nothing to visit
                if item is not None and item.__class__ is not ast.Constant:
                    plan = dispatch.get(item.__class__)
                    if plan is None or plan[1] or (removed and id(item) in removed):
                        visit(item)
                    else:        # an expression (most of the walk): visit()'s work, less a call
                        plan[0](self, item)

    def visit_Constant(self, node):   # ast.NodeVisitor's looks for the visit_Num of old Pythons
        pass

    def visit_Module(self, node):
        self.scope = build_scope(node, None)
        self.generic_visit(node)

    def visit_ClassDef(self, node):
        outer = self.cls
        self.cls = node
        attrs = functools.lru_cache(maxsize=None)(functools.partial(class_attrs, node, self.scope.index))
        for stmt in node.body:
            if isinstance(stmt, (ast.FunctionDef, ast.AsyncFunctionDef)):
                self._function(stmt, attrs)
            else:
                self.visit(stmt)
        self.cls = outer

    def visit_FunctionDef(self, node):
        self._function(node, None)

    visit_AsyncFunctionDef = visit_FunctionDef

    def _function(self, node, attrs):
        outer = self.scope, self.func, self.stmt
        self.stmt = node
        for d in node.decorator_list:
            self.visit(d)
        # defaults and annotations are evaluated where the def is, not inside the function
        for d in [*node.args.defaults, *node.args.kw_defaults]:
            if d is not None:
                self.visit(d)
        for a in [*node.args.posonlyargs, *node.args.args, *node.args.kwonlyargs, node.args.vararg,
                  node.args.kwarg]:
            if a is not None and a.annotation is not None:
                self.visit(a.annotation)
        if node.returns is not None:
            self.visit(node.returns)
        self.scope, self.func = build_scope(node, self.scope, attrs), node
        for child in node.body:
            self.visit(child)
        self.scope, self.func, self.stmt = outer

    def visit_Lambda(self, node):
        for d in [*node.args.defaults, *node.args.kw_defaults]:
            if d is not None:
                self.visit(d)
        outer = self.scope
        self.scope = build_scope(node, outer)
        self.visit(node.body)
        self.scope = outer
