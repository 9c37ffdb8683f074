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
import os

from recompat.translator import names


def module_name(path: str, package: str | None) -> str | None:
    """The dotted module a file is (`monai.networks.nets.classifier`; a package's `__init__.py` is the package);
    None where its package is not known."""
    if not package:
        return None
    stem = os.path.splitext(os.path.basename(path))[0]
    return package if stem == "__init__" else f"{package}.{stem}"


def module_facts(tree: ast.Module, module: str, scope: names.Scope | None = None) -> dict:
    """A module's top-level classes with the qualified names of their bases, and its module-level import bindings
    (what another module may import from it): plain data, sent back from worker processes. `scope`: the module's
    scope where the caller has it."""
    scope = scope or names.build_scope(tree, None)
    classes = {}
    for stmt in tree.body:
        if isinstance(stmt, ast.ClassDef):
            bases = []
            for base in stmt.bases:
                chain = names.attribute_chain(base)
                if chain is None:
                    continue
                imported = scope.qualname(chain[0])
                if imported is not None:
                    bases.append(".".join([imported, *chain[1:]]))
                elif len(chain) == 1:
                    bases.append(f"{module}.{chain[0]}")      # a class of this module (or an unknown name)
            classes[f"{module}.{stmt.name}"] = bases
    bindings = {name: qual for name, qual in scope.imports.items() if qual and name not in scope.other}
    for stmt in tree.body:   # `Upsample = UpSample`: another name for a class
        if isinstance(stmt, ast.Assign) and (chain := names.attribute_chain(stmt.value)) is not None:
            imported = scope.qualname(chain[0])
            qual = ".".join([imported, *chain[1:]]) if imported else f"{module}.{chain[0]}" if len(chain) == 1 else None
            for target in stmt.targets:
                if isinstance(target, ast.Name) and qual is not None:
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
