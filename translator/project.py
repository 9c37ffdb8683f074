"""What the files of one run tell about each other: which classes are models (Modules, Cells).

A file sees its own classes and its imports, but a model class often derives from one in another file of the same
package (MONAI's `Critic(Classifier)`, `Classifier(Regressor)`, with `Regressor` imported from `regressor.py`,
often through a package's `__init__.py`). The model pass renames `forward` only in a class it knows is a model, so
such a class kept `forward` and MindSpore ran the base class's `construct` instead. The engine collects each
module's top-level classes with their bases and its module-level import bindings (`module_facts`: the model pass
reports them, files it does not translate are read for them), works out which classes of the tree are models
(`model_classes`), and translates again, with those names, the files with a class that derives from one and
that their translation did not take for a model (`missed_models`).
"""
from __future__ import annotations

import ast
import builtins
import os
from typing import Callable

from recompat.translator import names

CELL, PRIMITIVE, OTHER = "cell", "primitive", "other"   # what a class or a factory makes (None: not shown)


def module_name(path: str, package: str | None) -> str | None:
    """The dotted module a file is (`monai.networks.nets.classifier`; a package's `__init__.py` is the package);
    None where its package is not known."""
    if not package:
        return None
    stem = os.path.splitext(os.path.basename(path))[0]
    return package if stem == "__init__" else f"{package}.{stem}"


def package_root(path: str, package: str) -> str:
    """The folder that holds the top package of a file of `package` (the folder Python imports it from)."""
    root = os.path.abspath(path)
    for _ in range(package.count(".") + 2):
        root = os.path.dirname(root)
    return root


def qualified(chain: list[str] | None, scope: names.Scope, module: str) -> str | None:
    """A dotted name as the module reads it: through its imports, else a name of the module itself (a class or
    function it defines; a name it does not bind is a built-in's, which Tree.kind tells apart)."""
    if not chain:
        return None
    imported = scope.qualname(chain[0])
    if imported is not None:
        return ".".join([imported, *chain[1:]])
    return f"{module}.{chain[0]}" if len(chain) == 1 else None


def module_facts(tree: ast.Module, module: str, scope: names.Scope | None = None) -> dict:
    """A module's top-level classes with the qualified names of their bases, and its module-level import bindings
    (what another module may import from it): plain data, sent back from worker processes. `scope`: the module's
    scope where the caller has it."""
    scope = scope or names.build_scope(tree, None)
    classes = {}
    for stmt in tree.body:
        if isinstance(stmt, ast.ClassDef):
            bases = (qualified(names.attribute_chain(base), scope, module) for base in stmt.bases)
            classes[f"{module}.{stmt.name}"] = [b for b in bases if b is not None]
    bindings = {name: qual for name, qual in scope.imports.items() if qual and name not in scope.other}
    for stmt in tree.body:   # `Upsample = UpSample`: another name for a class
        if isinstance(stmt, ast.Assign) and (qual := qualified(names.attribute_chain(stmt.value), scope, module)):
            for target in stmt.targets:
                if isinstance(target, ast.Name):
                    bindings[target.id] = qual
    return {"module": module, "classes": classes, "bindings": bindings}


def model_classes(facts: list[dict], framework) -> frozenset[str]:
    """The qualified names, class and re-exported alike, under which a class of the tree that derives from a model
    base (or a layer class) of the framework (a mappings.Framework) is reached. `facts`: module_facts of each
    module."""
    classes = {cls: bases for f in facts for cls, bases in f["classes"].items()}
    aliases = {f"{f['module']}.{name}": qual for f in facts for name, qual in f["bindings"].items()}

    def resolved(qual: str, seen=()) -> str:   # a name re-exported by a package, followed to where it is defined
        while qual in aliases and qual not in seen:
            seen, qual = (*seen, qual), aliases[qual]
        return qual

    models: set[str] = set()
    changed = True
    while changed:   # to a fixpoint: a class is a model once one of its bases is
        changed = False
        for cls, bases in classes.items():
            if cls not in models and any(framework.is_model_class(b) or resolved(b) in models for b in bases):
                models.add(cls)
                changed = True
    return frozenset(models | {name for name in aliases if resolved(name) in models})


def missed_models(facts: dict, models: frozenset[str]) -> set[str]:
    """The classes of a module that derive from one of the tree's `models` but that its translation did not take for
    models (`facts["models"]`: those it did): what translating it again with the tree's model classes changes."""
    taken = set(facts.get("models", ()))
    return {cls for cls, bases in facts["classes"].items() if cls not in taken and any(b in models for b in bases)}


# --------------------------------------------------------------------------------------------
# What a module's classes hold and its functions return: for the recompute marks, MindSpore -> torch




def made_by(value: ast.AST | None, scope: names.Scope, module: str, chained: frozenset[str],
            local: Callable[[str], list] = lambda name: []) -> list[str | None]:
    """The qualified names of the classes or functions whose call made `value` (`P.TopK().shard(...)` is made by
    TopK: `chained` are the methods that return the object they are called on), each branch of `a if c else b`
    counted, and a local name followed to the values `local` finds bound to it (`norm = A if c else B`, then
    `norm(...)`; `layer = A(); return layer`). None stands for what is not shown."""
    def made(v, seen):
        while (isinstance(v, ast.Call) and isinstance(v.func, ast.Attribute) and v.func.attr in chained
               and isinstance(v.func.value, ast.Call)):
            v = v.func.value
        if isinstance(v, ast.IfExp):
            return [*made(v.body, seen), *made(v.orelse, seen)]
        if isinstance(v, ast.Call):
            return refs(v.func, seen)
        if isinstance(v, ast.Name) and v.id not in seen and (values := local(v.id)):
            return [q for w in values for q in made(w, seen | {v.id})]
        return [None]

    def refs(v, seen):   # what a class or function reference names
        if isinstance(v, ast.IfExp):
            return [*refs(v.body, seen), *refs(v.orelse, seen)]
        if isinstance(v, ast.Name) and scope.qualname(v.id) is None and v.id not in seen and (values := local(v.id)):
            return [q for w in values for q in refs(w, seen | {v.id})]
        return [qualified(names.attribute_chain(v), scope, module)]

    return made(value, frozenset())


def assignments(owner: ast.AST) -> dict:
    """What the code under `owner` binds, in one walk: for each name, and for each `("self", attr)`, the values
    assigned to it (None for a binding whose value is not followed: a loop variable, an unpacked tuple, `+=`)."""
    found: dict = {}

    def key(target):
        if isinstance(target, ast.Name):
            return target.id
        return ("self", target.attr) if names.is_self_attr(target) else None

    def bind(target, value):
        if isinstance(target, (ast.Tuple, ast.List)):
            for t in target.elts:
                bind(t.value if isinstance(t, ast.Starred) else t, None)
        elif (k := key(target)) is not None:
            found.setdefault(k, []).append(value)

    for n in ast.walk(owner):
        if isinstance(n, ast.Assign):
            for t in n.targets:
                bind(t, n.value)
        elif isinstance(n, ast.AnnAssign) and n.value is not None:
            bind(n.target, n.value)
        elif isinstance(n, (ast.For, ast.AsyncFor, ast.AugAssign, ast.NamedExpr)):
            bind(n.target, None)
        elif isinstance(n, ast.withitem) and n.optional_vars is not None:
            bind(n.optional_vars, None)
    return found


def bound_in(bindings: dict) -> Callable[[str], list]:
    """`made_by`'s `local` from assignments(): the values bound to a name."""
    return lambda name: bindings.get(name, [])


def module_members(tree: ast.Module, module: str, chained: frozenset[str]) -> dict:
    """module_facts, plus what each class assigns to `self.<attr>` in its methods and what each module-level
    function returns (`made_by`): plain data."""
    scope = names.build_scope(tree, None)
    facts = module_facts(tree, module, scope)
    attributes, functions = {}, {}
    for stmt in tree.body:
        if isinstance(stmt, ast.ClassDef):
            held: dict[str, list] = {}
            for method in stmt.body:
                if isinstance(method, (ast.FunctionDef, ast.AsyncFunctionDef)):
                    bindings = assignments(method)
                    for k, values in bindings.items():
                        if isinstance(k, tuple):
                            held.setdefault(k[1], []).extend(
                                q for v in values for q in made_by(v, scope, module, chained, bound_in(bindings)))
            attributes[f"{module}.{stmt.name}"] = held
        elif isinstance(stmt, (ast.FunctionDef, ast.AsyncFunctionDef)):
            local = bound_in(assignments(stmt))
            returns = [made_by(n.value, scope, module, chained, local) for n in ast.walk(stmt)
                       if isinstance(n, ast.Return) and n.value is not None]
            functions[f"{module}.{stmt.name}"] = [q for r in returns for q in r] or [None]
    return {**facts, "attributes": attributes, "functions": functions}


class Tree:
    """A package's modules, each read and parsed the first time a question needs it, and what they make: is a
    class or a factory's result a Cell, an operator, something else, or not shown (`kind`)? `read(module)` gives a
    module's source bytes and the package its relative imports resolve against, or None where the tree has no
    such module. `frameworks`: mappings.Framework objects (their model bases, layer and operator modules, and the
    methods that return their object, `chained`)."""

    def __init__(self, read: Callable[[str], tuple[bytes, str] | None], frameworks, package: str | None = None):
        self._read, self.frameworks = read, tuple(frameworks)
        self.chained = frozenset().union(*(f.returns_self for f in self.frameworks))
        self._one_operator = {layer: attr for f in self.frameworks for layer, attr in f.one_operator_layers}
        self._reexports = tuple(r for f in self.frameworks for r in f.reexports)
        self.package = package   # the top package: names under it are looked up, no others
        self._members: dict[str, dict | None] = {}
        self._trees: dict[str, ast.Module] = {}   # parsed by the caller, members not worked out yet

    @classmethod
    def on_disk(cls, root: str, top: str, frameworks) -> "Tree":
        """The package `top` in the folder `root` (package_root), read from disk as Python would import it."""
        def read(module: str) -> tuple[bytes, str] | None:
            base = os.path.join(root, *module.split("."))
            for candidate, its_package in ((base + ".py", module.rpartition(".")[0]),
                                           (os.path.join(base, "__init__.py"), module)):
                try:
                    with open(candidate, "rb") as f:
                        return f.read(), its_package
                except OSError:
                    continue
            return None
        return cls(read, frameworks, top)

    def add(self, module: str, tree: ast.Module) -> None:
        """A module the caller has parsed (the file being translated): its members are worked out from `tree`
        when a question first needs them."""
        self._members.pop(module, None)
        self._trees[module] = tree

    def release(self, module: str) -> None:
        """Drop the tree `add` was given if no question needed it: a later one reads the module again."""
        self._trees.pop(module, None)

    def members(self, module: str) -> dict | None:
        """module_members of a module of the tree, or None (not in the tree, or not Python)."""
        if module not in self._members:
            self._members[module] = None
            tree = self._trees.pop(module, None)
            if tree is None:
                found = self._read(module) if self.package and module.split(".")[0] == self.package else None
                if found is None:
                    return None
                data, package = found
                try:
                    tree = names.resolve_relative_imports(ast.parse(data), package)
                except (SyntaxError, ValueError, RecursionError):
                    return None
            self._members[module] = module_members(tree, module, self.chained)
        return self._members[module]

    def _defined(self, qual: str, seen=()) -> tuple[str, str, dict] | None:
        """(kind of member: "class" | "function", its qualified name, its module's members) where `qual` is
        defined, re-exports and aliases followed."""
        module, _, name = qual.rpartition(".")
        members = self.members(module) if module else None
        if members is None or qual in seen:
            return None
        if qual in members["attributes"]:
            return "class", qual, members
        if qual in members["functions"]:
            return "function", qual, members
        target = members["bindings"].get(name)
        return None if target is None else self._defined(target, (*seen, qual))

    def kind(self, qual: str | None, seen=()) -> str | None:
        """What calling `qual` makes: CELL, PRIMITIVE, OTHER, or None where the tree does not show it."""
        if qual is None or qual in seen:
            return None
        for fw in self.frameworks:
            if fw.is_model_class(qual):
                return CELL
            if qual.startswith(fw.operator_modules) and qual.rsplit(".", 1)[1][:1].isupper():
                return PRIMITIVE
        found = self._defined(qual)
        if found is None:   # a name the module uses but does not bind: a built-in class (object, dict, Exception)
            module, _, name = qual.rpartition(".")
            builtin = getattr(builtins, name, None)
            return OTHER if (isinstance(builtin, type) and builtin not in (type, super)
                             and self.members(module) is not None) else None
        what, where, members = found
        seen = (*seen, qual)
        if what == "function":
            return one([self.kind(q, seen) for q in members["functions"][where]])
        kinds = [self.kind(b, seen) for b in members["classes"][where]]
        if CELL in kinds or PRIMITIVE in kinds:
            return CELL if CELL in kinds else PRIMITIVE
        return OTHER if all(k == OTHER for k in kinds) else None

    def made(self, qual: str | None, seen=()) -> list[str | None]:
        """The classes whose instances calling `qual` makes: a factory of the tree followed to what it returns;
        a class, or a name the tree does not define, is itself."""
        found = self._defined(qual) if qual and qual not in seen else None
        if found is None or found[0] == "class":
            return [found[1] if found else qual]
        _, where, members = found
        return [c for q in members["functions"][where] for c in self.made(q, (*seen, qual))]

    def one_operator(self, layer: str | None) -> str | None:
        """The attribute holding the one operator a framework layer class runs (frameworks.yaml
        `one_operator_layers`; a re-exported name read as its public one), or None."""
        if layer is None:
            return None
        for package, public in self._reexports:
            if layer.startswith(package + "."):
                layer = f"{public}.{layer.rsplit('.', 1)[1]}"
        return self._one_operator.get(layer)

    def attribute_kind(self, owner: str | None, attr: str) -> str | None:
        """What `<an instance of owner>.<attr>` holds, from every assignment of `self.<attr>` in the class (and
        the bases it is shown to have in the tree), or a framework layer's one operator."""
        if attr == self.one_operator(owner):
            return PRIMITIVE
        found = self._defined(owner) if owner else None
        if found is None or found[0] != "class":
            return None
        _, where, members = found
        made = members["attributes"][where].get(attr)
        if made is None:
            return one([self.attribute_kind(b, attr) for b in members["classes"][where]] or [None])
        return one([self.kind(q) for q in made])


def one(kinds: list) -> str | None:
    """The kind all of them are, or None."""
    return kinds[0] if kinds and all(k == kinds[0] for k in kinds) else None
