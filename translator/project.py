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
import functools
import os
from typing import Callable

from recompat.translator import names, tree_index

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
    stars = [m for stmt in tree.body if isinstance(stmt, ast.ImportFrom) and stmt.names[0].name == "*"
             and (m := stmt.module if not stmt.level else getattr(stmt, "resolved_module", None))]
    return {"module": module, "classes": classes, "bindings": bindings, "stars": stars,
            "defined": sorted(n for n in scope.other if n not in bindings), "all": _literal_all(tree)}


def module_units(tree: ast.Module, module: str, scope: names.Scope | None = None) -> dict:
    """Each top-level class, function and named value (`NAME = ...`) of a module, for the "will it run" verdicts
    (translator/verdicts.py): {qualified name: {"kind": "class" | "function" | "value", "line", "end", "bases"
    (qualified), "methods"}}, where each
    method (a function: its one body, "") is {"line", "end", "calls": the methods of its class it calls as
    self.<name>, "uses": [[dotted name it reads, qualified as the module reads it; read under a condition only?]],
    "branches": [[first, last line] of each block that runs under a condition (an if's, a while's, a try's
    handlers)]}; a class's own body, where it holds more than its methods, is its method "". Locals come out as
    names of the module: only those that name a unit of the tree count. Plain data, as module_facts."""
    scope = scope or names.build_scope(tree, None)
    index = tree_index.index(tree)
    qualify = functools.lru_cache(maxsize=None)(lambda chain: qualified(list(chain), scope, module))
    defs = (ast.FunctionDef, ast.AsyncFunctionDef)
    units = {}
    for stmt in tree.body:
        if isinstance(stmt, defs):
            units[f"{module}.{stmt.name}"] = {"kind": "function", **_span(stmt),
                                               "methods": {"": _body_facts(index.inside(stmt, *_READ), qualify)}}
        elif isinstance(stmt, ast.ClassDef):
            bases = (qualified(names.attribute_chain(base), scope, module) for base in stmt.bases)
            methods = {n.name: {**_span(n), **_body_facts(index.inside(n, *_READ), qualify)}
                       for n in stmt.body if isinstance(n, defs)}
            if any(not isinstance(n, defs) for n in stmt.body):   # the class body itself runs when it is made
                methods[""] = _body_facts(index.own(stmt, _READ, defs), qualify)
            units[f"{module}.{stmt.name}"] = {"kind": "class", **_span(stmt),
                                               "bases": [b for b in bases if b is not None], "methods": methods}
        elif isinstance(stmt, (ast.Assign, ast.AnnAssign)) and stmt.value is not None:
            targets = stmt.targets if isinstance(stmt, ast.Assign) else [stmt.target]
            facts = _body_facts([n for n in ast.walk(stmt.value) if isinstance(n, _READ)], qualify)
            if not isinstance(stmt.value, (ast.Name, ast.Attribute)):
                # a table or a call (ACT2FN = {"gelu": GELUActivation, ...}): what a reader takes out depends on
                # the key, so what it holds runs only on some arguments
                facts["branches"].append([stmt.value.lineno, stmt.value.end_lineno])
                facts["uses"] = [[q, True] for q, _ in facts["uses"]]
            for t in targets:
                if isinstance(t, ast.Name):
                    units[f"{module}.{t.id}"] = {"kind": "value", **_span(stmt), "methods": {"": facts}}
    return units


_BRANCHING = (ast.If, ast.While, ast.IfExp, ast.Try, getattr(ast, "TryStar", ast.Try))
_READ = (ast.Name, ast.Attribute, *dict.fromkeys(_BRANCHING))   # what _body_facts reads, in source order


def _span(stmt: ast.stmt) -> dict:
    return {"line": names.first_line(stmt), "end": stmt.end_lineno}


def _body_facts(nodes: list[ast.AST], qualify) -> dict:
    """The facts of one body from its nodes (tree_index order): a read is conditional where its line lies in a
    conditional block (a whole line: `a if c else b`'s test counts as conditional too)."""
    branches: list[list[int]] = []
    for n in nodes:
        if isinstance(n, _BRANCHING):
            blocks = [*n.handlers, *n.orelse] if isinstance(n, _BRANCHING[3:]) else \
                [n.body, n.orelse] if isinstance(n, ast.IfExp) else [*n.body, *n.orelse]
            branches += [[b.lineno, b.end_lineno] for b in blocks]
    uses: dict[str, bool] = {}
    calls: set[str] = set()
    for n in nodes:
        if n.__class__ is ast.Name or n.__class__ is ast.Attribute:
            chain = names.attribute_chain(n)
            if chain is None:
                continue
            if len(chain) == 2 and chain[0] == "self":
                calls.add(chain[1])
            if (qual := qualify(tuple(chain))) is not None and uses.get(qual) is not False:
                uses[qual] = any(a <= n.lineno <= b for a, b in branches)
    return {"calls": sorted(calls), "uses": sorted([q, c] for q, c in uses.items()), "branches": branches}


def _literal_all(tree: ast.Module) -> list[str] | None:
    """A module's `__all__` where it is written out as strings (`__all__ = [...]`, `+= [...]`); None otherwise."""
    found = None
    for stmt in tree.body:
        target = stmt.targets[0] if isinstance(stmt, ast.Assign) and len(stmt.targets) == 1 else \
            getattr(stmt, "target", None) if isinstance(stmt, (ast.AugAssign, ast.AnnAssign)) else None
        if not (isinstance(target, ast.Name) and target.id == "__all__"):
            continue
        value = stmt.value
        if not (isinstance(value, (ast.List, ast.Tuple))
                and all(isinstance(e, ast.Constant) and isinstance(e.value, str) for e in value.elts)):
            return None
        listed = [e.value for e in value.elts]
        found = [*(found or []), *listed] if isinstance(stmt, ast.AugAssign) else listed
    return found


def names_framework(stars: dict[str, dict[str, str]], framework: str) -> bool:
    """Do star imports (module -> {name: qualified name}) bind a name of `framework`? A file using `nn.Linear`
    from `from .common import *` need not spell `torch`."""
    return any(q == framework or q.startswith(framework + ".") for b in stars.values() for q in b.values())


def star_exports(facts: list[dict]) -> dict[str, dict[str, str]]:
    """What `from m import *` binds, for each module m of the tree: {name: qualified name}. Its `__all__` where
    it is written out, else every name it binds that does not start with an underscore; a module's own star
    imports count, followed through the tree."""
    by_module = {f["module"]: f for f in facts}
    done: dict[str, dict[str, str]] = {}

    def exports(module: str, seen: frozenset[str]) -> dict[str, str]:
        if module in done:
            return done[module]
        f = by_module[module]
        bound: dict[str, str] = {}
        for star in f.get("stars", ()):
            if star in by_module and star not in seen:
                bound.update(exports(star, seen | {module}))
        bound.update({name: f"{module}.{name}" for name in f.get("defined", ())})
        bound.update(f["bindings"])
        listed = f.get("all")
        done[module] = {n: bound[n] for n in (listed if listed is not None else bound)
                        if n in bound and (listed is not None or not n.startswith("_"))}
        return done[module]

    return {module: exports(module, frozenset()) for module in by_module}


def resolver(facts: list[dict], exports: dict[str, dict[str, str]] | None = None) -> Callable[[str], str]:
    """A qualified name as a module of the tree reads it, followed through the tree's imports and re-exports
    (`monai.networks.nets.Regressor`) to where it is defined (`monai.networks.nets.regressor.Regressor`)."""
    return _aliases(facts, exports)[1]


def _aliases(facts: list[dict], exports):
    aliases = {f"{f['module']}.{name}": qual for f in facts for star in f.get("stars", ())
               for name, qual in (exports or {}).get(star, {}).items()}
    aliases.update({f"{f['module']}.{name}": qual for f in facts for name, qual in f["bindings"].items()})
    for f in facts:   # a class the module defines is its own, whatever a star binds
        for cls in f["classes"]:
            aliases.pop(cls, None)

    def resolved(qual: str, seen=()) -> str:   # a name re-exported by a package, followed to where it is defined
        while qual in aliases and qual not in seen:
            seen, qual = (*seen, qual), aliases[qual]
        return qual

    return aliases, resolved


def model_classes(facts: list[dict], framework, exports: dict[str, dict[str, str]] | None = None) -> frozenset[str]:
    """The qualified names, class and re-exported alike, under which a class of the tree that derives from a model
    base (or a layer class) of the framework (a mappings.Framework) is reached. `facts`: module_facts of each
    module; `exports`: star_exports of them (a name a module reads through a star import is the star's)."""
    classes = {cls: bases for f in facts for cls, bases in f["classes"].items()}
    aliases, resolved = _aliases(facts, exports)
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
    return _made(value, frozenset(), scope, module, chained, local)


# made_by's two steps, at module level: nested functions that call each other would make a reference cycle per
# call, which holds the module's scope and tree until the cyclic collector runs (the engine pauses it per file)
def _made(v, seen, scope, module, chained, local) -> list[str | None]:
    while (isinstance(v, ast.Call) and isinstance(v.func, ast.Attribute) and v.func.attr in chained
           and isinstance(v.func.value, ast.Call)):
        v = v.func.value
    if isinstance(v, ast.IfExp):
        return [*_made(v.body, seen, scope, module, chained, local),
                *_made(v.orelse, seen, scope, module, chained, local)]
    if isinstance(v, ast.Call):
        return _refs(v.func, seen, scope, module, local)
    if isinstance(v, ast.Name) and v.id not in seen and (values := local(v.id)):
        return [q for w in values for q in _made(w, seen | {v.id}, scope, module, chained, local)]
    return [None]


def _refs(v, seen, scope, module, local) -> list[str | None]:
    """What a class or function reference names."""
    if isinstance(v, ast.IfExp):
        return [*_refs(v.body, seen, scope, module, local), *_refs(v.orelse, seen, scope, module, local)]
    if isinstance(v, ast.Name) and scope.qualname(v.id) is None and v.id not in seen and (values := local(v.id)):
        return [q for w in values for q in _refs(w, seen | {v.id}, scope, module, local)]
    return [qualified(names.attribute_chain(v), scope, module)]


_BINDING_NODES = (ast.Assign, ast.AnnAssign, ast.For, ast.AsyncFor, ast.AugAssign, ast.NamedExpr, ast.withitem)


def assignments(owner: ast.AST, index: tree_index.TreeIndex | None = None) -> dict:
    """What the code under `owner` binds: for each name, and for each `("self", attr)`, the values assigned to
    it (None for a binding whose value is not followed: a loop variable, an unpacked tuple, `+=`). `index`, the
    index of the tree that holds `owner`, finds them without a walk."""
    found: dict = {}
    for n in (index.under(owner, *_BINDING_NODES) if index is not None else ast.walk(owner)):
        if isinstance(n, ast.Assign):
            for t in n.targets:
                _bind(found, t, n.value)
        elif isinstance(n, ast.AnnAssign) and n.value is not None:
            _bind(found, n.target, n.value)
        elif isinstance(n, (ast.For, ast.AsyncFor, ast.AugAssign, ast.NamedExpr)):
            _bind(found, n.target, None)
        elif isinstance(n, ast.withitem) and n.optional_vars is not None:
            _bind(found, n.optional_vars, None)
    return found


def _bind(found: dict, target, value) -> None:
    """assignments(): record `value` for what `target` binds (a tuple's parts: None, not followed)."""
    if isinstance(target, (ast.Tuple, ast.List)):
        for t in target.elts:
            _bind(found, t.value if isinstance(t, ast.Starred) else t, None)
    elif isinstance(target, ast.Name):
        found.setdefault(target.id, []).append(value)
    elif names.is_self_attr(target):
        found.setdefault(("self", target.attr), []).append(value)


def bound_in(bindings: dict) -> Callable[[str], list]:
    """`made_by`'s `local` from assignments(): the values bound to a name."""
    return lambda name: bindings.get(name, [])


def module_members(tree: ast.Module, module: str, chained: frozenset[str]) -> dict:
    """module_facts, plus what each class assigns to `self.<attr>` in its methods and what each module-level
    function returns (`made_by`): plain data."""
    scope = names.build_scope(tree, None)
    index = scope.index
    facts = module_facts(tree, module, scope)
    attributes, functions = {}, {}
    for stmt in tree.body:
        if isinstance(stmt, ast.ClassDef):
            held: dict[str, list] = {}
            for method in stmt.body:
                if isinstance(method, (ast.FunctionDef, ast.AsyncFunctionDef)):
                    bindings = assignments(method, index)
                    for k, values in bindings.items():
                        if isinstance(k, tuple):
                            held.setdefault(k[1], []).extend(
                                q for v in values for q in made_by(v, scope, module, chained, bound_in(bindings)))
            attributes[f"{module}.{stmt.name}"] = held
        elif isinstance(stmt, (ast.FunctionDef, ast.AsyncFunctionDef)):
            local = bound_in(assignments(stmt, index))
            returns = [made_by(n.value, scope, module, chained, local) for n in index.inside(stmt, ast.Return)
                       if n.value is not None]
            functions[f"{module}.{stmt.name}"] = [q for r in returns for q in r] or [None]
    return {**facts, "attributes": attributes, "functions": functions}


class Tree:
    """A package's modules, each read and parsed the first time a question needs it, and what they make: is a
    class or a factory's result a Cell, an operator, something else, or not shown (`kind`)? `read(module)` gives a
    module's source bytes and the package its relative imports resolve against, or None where the tree has no
    such module. `frameworks`: mappings.Framework objects (their model bases, layer and operator modules, and the
    methods that return their object, `chained`)."""

    def __init__(self, read: Callable[[str], tuple[bytes, str] | None], frameworks, package: str | None = None,
                 modules: Callable[[], list[str]] = lambda: []):
        self._read, self.frameworks, self._modules = read, tuple(frameworks), modules
        self.chained = frozenset().union(*(f.returns_self for f in self.frameworks))
        self._one_operator = {layer: attr for f in self.frameworks for layer, attr in f.one_operator_layers}
        self.package = package   # the top package: names under it are looked up, no others
        self._members: dict[str, dict | None] = {}
        self._trees: dict[str, ast.Module] = {}   # parsed by the caller, members not worked out yet
        self.sequences = frozenset().union(*(f.sequences for f in self.frameworks))
        self._mappings = frozenset().union(*(f.mappings for f in self.frameworks))
        self._children = {k: v for f in self.frameworks for k, v in f.children}
        self._layer_modules = tuple(m for f in self.frameworks for m in f.layer_modules)
        # what the questions about parameters (parameter_kind) keep: each module's tree, scope and functions,
        # the bindings of each function or class, every module's source (to find the few that name a class)
        self._parsed: dict[str, ast.Module | None] = {}
        self._scopes: dict[str, names.Scope] = {}
        self._functions: dict[str, list] = {}
        self._bindings: dict[int, dict] = {}
        self._sources: dict[str, bytes] | None = None
        self._call_lists: dict[tuple, list] = {}   # (module, class, function) -> _calls_of
        self._lines: dict[str, list[bytes]] = {}   # a module's source lines (_spells)
        self._answers: dict[tuple, str | None] = {}   # parameter_kind's answers that hold for every asker
        self._cycles = 0                           # how many times a question met itself on the way

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

        def modules() -> list[str]:
            found = []
            for folder, _, files in os.walk(os.path.join(root, top)):
                package = os.path.relpath(folder, root).replace(os.sep, ".")
                found += [package if f == "__init__.py" else f"{package}.{f[:-3]}" for f in files if f.endswith(".py")]
            return sorted(found)
        return cls(read, frameworks, top, modules)

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
            tree = self._trees.get(module) or self._parsed.get(module) or self._parse(module)
            if tree is None:
                return None
            self._members[module] = module_members(tree, module, self.chained)
        return self._members[module]

    def _parse(self, module: str) -> ast.Module | None:
        found = self._read(module) if self.package and module.split(".")[0] == self.package else None
        if found is None:
            return None
        data, package = found
        try:
            return names.resolve_relative_imports(ast.parse(data), package)
        except (SyntaxError, ValueError, RecursionError):
            return None

    def parsed(self, module: str) -> ast.Module | None:
        """A module's tree, kept for the run (the questions about parameters walk it more than once)."""
        if module not in self._parsed:
            self._parsed[module] = self._trees.get(module) or self._parse(module)
        return self._parsed[module]

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
        return next((self._one_operator[name] for name in {f.public_name(layer) for f in self.frameworks}
                     if name in self._one_operator), None)

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


    # -- a parameter's kind, from the calls the package makes --------------------------------------

    def parameter_kind(self, module: str, cls: str | None, func: str, param: str, seen=()) -> str | None:
        """What every call in the package passes as `param` of `func` (a method of the class `cls` of `module`,
        or a function of the module where `cls` is None): CELL, PRIMITIVE, OTHER where all calls agree (a call
        that leads back to this question gives no evidence either way), None where one does not show it, leaves
        the parameter out or none is found. `LayerSetting.set_recompute(self, layer, layer_id)` is called with
        `layer` by `__call__`, which the models call with the layers they build."""
        key = (module, cls, func, param)
        if key in seen:
            self._cycles += 1
            return _CYCLE
        if key in self._answers:
            return self._answers[key]
        definition = self._definition(module, cls, func)
        if definition is None:
            return None
        cycles, seen, kinds = self._cycles, (*seen, key), []
        for where, caller_cls, caller, call, bound in self._calls(module, cls, definition):
            argument = _argument(call, definition, param, bound)
            if argument is None:
                kinds = [None]
                break
            kinds.append(self.expression_kind(where, caller_cls, caller, argument, seen))
        kinds = [k for k in kinds if k != _CYCLE]
        answer = one(kinds) if kinds else None
        if self._cycles == cycles:   # an answer that leaned on no question still open holds for every asker
            self._answers[key] = answer
        return answer

    def _calls(self, module: str, cls: str | None, definition) -> list:
        key = (module, cls, definition.name)
        if key not in self._call_lists:
            self._call_lists[key] = list(self._calls_of(module, cls, definition))
        return self._call_lists[key]

    def _definition(self, module: str, cls: str | None, func: str) -> ast.FunctionDef | None:
        tree = self.parsed(module)
        body = tree.body if tree is not None else []
        if cls is not None:
            body = next((c.body for c in body if isinstance(c, ast.ClassDef) and c.name == cls), [])
        return next((f for f in body if isinstance(f, (ast.FunctionDef, ast.AsyncFunctionDef)) and f.name == func),
                    None)

    def _calls_of(self, module: str, cls: str | None, definition):
        """(module, class node, function node, call, whether the call binds the first parameter) for each call
        of `definition` the package shows: `self.m(...)` and `Cls.m(...)` in its module, `m(...)` for a
        function, and calls through the instances other modules hold (`self.setting = Cls(...)`, then
        `self.setting(...)` for `__call__` or `self.setting.m(...)`); only modules that spell the class's or
        function's name are read."""
        func, static = definition.name, _decorated(definition, "staticmethod")
        qual = f"{module}.{cls or func}"
        word = (cls or func).encode()
        for where in [m for m, text in self._all_sources().items() if word in text]:
            scope = self._scope(where)
            for caller_cls, caller, calls in self._functions_of(where):
                holders = ()
                if cls is not None and not static:   # what could hold an instance: the receivers of such calls
                    candidates = {_holder(c.func.value) for c in calls
                                  if isinstance(c.func, ast.Attribute) and c.func.attr == func}
                    if func == "__call__":
                        candidates |= {_holder(c.func) for c in calls}
                    # a holder is made where the class is named: in the function (a local) or its class
                    candidates = {c for c in candidates - {None}
                                  if self._spells(where, caller if isinstance(c, str) else caller_cls, word)}
                    holders = self._holders(where, caller_cls, caller, qual, candidates) if candidates else ()
                for call in calls:
                    f = call.func
                    if isinstance(f, ast.Name) and cls is None and self._names(f, scope, where, qual):
                        yield where, caller_cls, caller, call, False
                    elif isinstance(f, ast.Attribute) and f.attr == func and cls is not None:
                        if names.is_self_attr(f) and where == module and caller_cls is not None \
                                and caller_cls.name == cls:
                            yield where, caller_cls, caller, call, not static
                        elif self._names(f.value, scope, where, qual):
                            yield where, caller_cls, caller, call, False
                        elif _holder(f.value) in holders:
                            yield where, caller_cls, caller, call, True
                    if func == "__call__" and _holder(f) in holders:
                        yield where, caller_cls, caller, call, True

    def _spells(self, module: str, node, word: bytes) -> bool:
        """Does the source of `node` (a function or class of `module`) hold `word`?"""
        if node is None:
            return False
        if module not in self._lines:
            self._lines[module] = self._all_sources().get(module, b"").splitlines()
        return any(word in line for line in self._lines[module][node.lineno - 1:node.end_lineno])

    def _holders(self, module: str, cls, func, qual: str, candidates: set) -> set:
        """Those of `candidates` (names, `("self", attr)`) that hold an instance of `qual` where `func` runs."""
        scope, found = self._scope(module), set()
        for key in candidates:
            owner = func if isinstance(key, str) else cls
            bindings = self._bound(module, owner) if owner is not None else {}
            values = bindings.get(key, [])
            made = [q for v in values for q in made_by(v, scope, module, self.chained, bound_in(bindings))]
            if made and all(q is not None and qual in self.made(q) for q in made):
                found.add(key)
        return found

    def expression_kind(self, module: str, cls, func, expr: ast.expr, seen=()) -> str | None:
        """What `expr` is where `func` (of class `cls`, or None) of `module` evaluates it."""
        scope = self._scope(module)
        local = self._bound(module, func) if func is not None else {}
        if isinstance(expr, ast.Name):
            if func is not None and expr.id not in local and expr.id in parameters(func):
                return self.parameter_kind(module, cls.name if cls else None, func.name, expr.id, seen)
            values = local.get(expr.id, [])
            if values and self.one_kind(module, func, expr.id) and self.into_layers(module, cls, func, expr.id):
                return CELL   # its one value is put in a CellList or SequentialCell, which take Cells only
            if values and all(v is None for v in values) and (loop := self._loop_source(func, expr)) is not None:
                source, how = loop
                if how != "children":   # a CellList's, a SequentialCell's, a CellDict's items are Cells
                    return CELL if self._holds_layers(module, cls, func, source, how) else None
                parent = self.expression_kind(module, cls, func, source, seen)
                return parent if parent in (CELL, _CYCLE) else None   # a Cell's children are Cells
        elif names.is_self_attr(expr) and cls is not None:
            values = self._bound(module, cls).get(("self", expr.attr), [])
        else:
            values = [expr]
        if not values or None in values:
            return None
        return one([self.kind(q) for v in values for q in made_by(v, scope, module, self.chained, bound_in(local))])

    def _loop_source(self, func, use: ast.Name) -> tuple[ast.expr, str] | None:
        """(X, how) where the name `use` reads is bound by the innermost loop around it and that loop yields
        X's layers: how "children", a loop over a layer's children (`for n, c in X._cells.items()`,
        `for c in X.cells()`: frameworks.yaml `children`); "sequence", a loop over a container of layers or the
        list one was built from, or a slice of either (`for layer in self.layers`, `for b in blocks[:4]`);
        "mapping", over a dict of layers' values or items (`for c in X.values()`); else None."""
        loops = [n for n in ast.walk(func) if isinstance(n, (ast.For, ast.AsyncFor))
                 and n.body[0].lineno <= use.lineno <= n.end_lineno
                 and any(isinstance(t, ast.Name) and t.id == use.id for t in ast.walk(n.target))]
        if not loops:
            return None
        loop = max(loops, key=lambda n: n.lineno)
        source = loop.iter
        single = isinstance(loop.target, ast.Name)   # `for c in ...`; else `for name, c in ...`
        pair = (isinstance(loop.target, ast.Tuple) and len(loop.target.elts) == 2
                and isinstance(loop.target.elts[1], ast.Name) and loop.target.elts[1].id == use.id)
        method = None
        if isinstance(source, ast.Call) and not source.args and not source.keywords \
                and isinstance(source.func, ast.Attribute) and source.func.attr in ("items", "values"):
            method, source = source.func.attr, source.func.value   # X.values(), X._cells.items()
        if method is None and single:
            while isinstance(source, ast.Subscript) and isinstance(source.slice, ast.Slice):
                source = source.value
        if isinstance(source, ast.Name) or names.is_self_attr(source):
            if method is None and single:
                return source, "sequence"
            return (source, "mapping") if (method == "values" and single) or (method == "items" and pair) else None
        is_call = isinstance(source, ast.Call) and not source.args and not source.keywords
        attribute = source.func if is_call else source
        way = self._children.get(attribute.attr + ("()" if is_call else "")) \
            if isinstance(attribute, ast.Attribute) else None
        shape = {"values": "values", "items": "pairs"}.get(method) if way == "mapping" else \
            (way if method is None else None)
        if shape is not None and (single if shape == "values" else pair):
            return attribute.value, "children"
        return None

    def _holds_layers(self, module: str, cls, func, holder: ast.expr, how: str) -> bool:
        """Is `holder` (a local or `self.<attr>`) a container of layers of that kind (made by one only), or,
        for a sequence, a local list given whole to one's constructor (`SequentialCell(layers)`)?"""
        values = (self._bound(module, func).get(holder.id, []) if isinstance(holder, ast.Name) else
                  self._bound(module, cls).get(("self", holder.attr), []) if names.is_self_attr(holder) and cls else [])
        made = [q for v in values for q in made_by(v, self._scope(module), module, self.chained)]
        kinds = self.sequences if how == "sequence" else self._mappings
        if made and all(self._is_container(q, kinds) for q in made):
            return True
        return how == "sequence" and isinstance(holder, ast.Name) and self._given_to_a_sequence(module, func,
                                                                                              {holder.id})

    def _given_to_a_sequence(self, module: str, func, given: set[str]) -> bool:
        """Is one of the names `given` passed to a SequentialCell's or CellList's constructor in `func`, itself or
        in a list?"""
        scope = self._scope(module)
        for n in ast.walk(func):
            if isinstance(n, ast.Call) and all(self._is_container(q, self.sequences)
                                               for q in made_by(n, scope, module, self.chained)):
                for a in n.args:
                    a = a.value if isinstance(a, ast.Starred) else a
                    items = a.elts if isinstance(a, (ast.List, ast.Tuple)) else [a]
                    if any(isinstance(i, ast.Name) and i.id in given for i in items):
                        return True
        return False

    def into_layers(self, module: str, cls, func, name: str) -> bool:
        """Is `name` put in a container of layers in `func` (SequentialCell, CellList: they refuse anything but
        Cells): passed to one's constructor, itself or in a list (`layers.append(x)`, then
        `SequentialCell(layers)`), or appended or inserted into one (a local, or `self.<attr>` of the class)? A
        caller applies it only where `name` holds one kind of value in `func` (one_kind)."""
        given = {name}
        for n in ast.walk(func):
            if (isinstance(n, ast.Call) and isinstance(n.func, ast.Attribute) and n.func.attr in ("append", "insert")
                    and n.args and isinstance(n.args[-1], ast.Name) and n.args[-1].id == name):
                if self._holds_layers(module, cls, func, n.func.value, "sequence"):
                    return True
                if isinstance(n.func.value, ast.Name):
                    given.add(n.func.value.id)
        return self._given_to_a_sequence(module, func, given)

    def one_kind(self, module: str, func, name: str) -> bool:
        """Does `name` hold one kind of value all through `func`: bound once, or only by loops over the same
        name that `func` does not rebind (`for layer in blocks:` twice)?"""
        bound = self._bound(module, func)
        values = bound.get(name, [])
        if len(values) <= 1:
            return True
        loops = [n for n in ast.walk(func) if isinstance(n, (ast.For, ast.AsyncFor))
                 and isinstance(n.target, ast.Name) and n.target.id == name]
        sources = {n.iter.id for n in loops if isinstance(n.iter, ast.Name)}
        return (len(loops) == len(values) and len(sources) == 1 and all(isinstance(n.iter, ast.Name) for n in loops)
                and not bound.get(next(iter(sources))))

    def _is_container(self, qual: str | None, kinds: frozenset[str]) -> bool:
        """Is `qual` a framework container of layers of those kinds (SequentialCell, CellList; CellDict)?"""
        return qual is not None and qual.rsplit(".", 1)[-1] in kinds and qual.startswith(self._layer_modules)

    def _names(self, node, scope, module: str, qual: str) -> bool:
        """Does `node`, read in `module`, name the class or function `qual` (re-exports followed)?"""
        found = self._defined(q) if (q := qualified(names.attribute_chain(node), scope, module)) else None
        return found is not None and found[1] == qual

    def _all_sources(self) -> dict[str, bytes]:
        if self._sources is None:
            self._sources = {m: found[0] for m in self._modules() if (found := self._read(m)) is not None}
        return self._sources

    def _scope(self, module: str) -> names.Scope:
        if module not in self._scopes:
            self._scopes[module] = names.build_scope(self.parsed(module) or ast.Module([], []), None)
        return self._scopes[module]

    def _bound(self, module: str, owner: ast.AST) -> dict:
        """assignments() of a function or class of `module`, found through its tree's index."""
        if id(owner) not in self._bindings:
            self._bindings[id(owner)] = assignments(owner, self._scope(module).index)
        return self._bindings[id(owner)]

    def _functions_of(self, module: str) -> list:
        """(class node or None, function node, the calls in its own body) for every function of a module, nested
        ones included (a function in a method counts as the method's class's)."""
        if module not in self._functions:
            index, found = self._scope(module).index, []
            around: list = []   # the defs and classes the current one is inside, innermost last
            for node in index.of(ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef):
                start = index.span(node)[0]
                while around and index.span(around[-1])[1] <= start:
                    around.pop()
                if not isinstance(node, ast.ClassDef):
                    cls = next((a for a in reversed(around) if isinstance(a, ast.ClassDef)), None)
                    found.append((cls, node, index.own(node, (ast.Call,), _SCOPES)))
                around.append(node)
            self._functions[module] = found
        return self._functions[module]


_SCOPES = (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)   # a function's own calls are not theirs
_CYCLE = "cycle"   # parameter_kind: the question asked again on the way; no evidence either way


def _holder(node) -> str | tuple | None:
    """The key project.assignments gives what `node` reads: a name, or ("self", attr)."""
    if isinstance(node, ast.Name):
        return node.id
    return ("self", node.attr) if names.is_self_attr(node) else None


def _decorated(func, name: str) -> bool:
    return any(isinstance(d, ast.Name) and d.id == name for d in func.decorator_list)


def parameters(func) -> list[str]:
    a = func.args
    return [p.arg for p in (*a.posonlyargs, *a.args, *a.kwonlyargs)]


def _argument(call: ast.Call, func, param: str, bound: bool) -> ast.expr | None:
    """The expression a call passes as `param` of `func` (`bound`: the call fills the first parameter itself,
    `self.m(x)`), or None (left to its default, or passed through *args / **kwargs)."""
    positional = [p.arg for p in (*func.args.posonlyargs, *func.args.args)]
    if bound or _decorated(func, "classmethod"):
        positional = positional[1:]
    if param in positional:
        i = positional.index(param)
        if any(isinstance(a, ast.Starred) for a in call.args[:i + 1]):
            return None
        if i < len(call.args):
            return call.args[i]
    return next((k.value for k in call.keywords if k.arg == param), None)


def one(kinds: list) -> str | None:
    """The kind all of them are, or None."""
    return kinds[0] if kinds and all(k == kinds[0] for k in kinds) else None
