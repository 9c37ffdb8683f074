"""Will a translated model class run? Told before anything runs, from what the translation left (--scope model).

A class runs on the target framework only where nothing it runs still holds the source framework's code: the
methods it runs (its class body, `__init__`, its forward, and the methods of its own they call as `self.<name>`),
its bases, and the classes and functions of the tree those read, across files. What they hold under a condition
(an `if`'s branch, an `except`) runs only on some arguments: such a class *may not run*; one that holds a manual
site on a path it always takes *will not run*. A base that is neither a framework's, nor the standard
library's, nor the tree's is outside the translated files: recompat cannot tell what it is (a Hugging Face
`GradientCheckpointingLayer` from a file not given), so it left the class's methods as they are.

Each verdict names the first reason and where it is (`file:line`); the class's file gets a note: RC328 (will
not run), RC329 (may not run). Facts come from translator/project.py's `module_units`.
"""
from __future__ import annotations

import sys
from dataclasses import asdict, dataclass

from recompat.translator.results import Diagnostic, FileResult

STANDARD = frozenset(sys.stdlib_module_names) | {"builtins", "typing_extensions"}
RUNS, MAY_NOT, WILL_NOT = "runs", "may not run", "will not run"
VERDICTS = (RUNS, MAY_NOT, WILL_NOT)
NOTES = {WILL_NOT: "RC328", MAY_NOT: "RC329"}


@dataclass
class ClassVerdict:
    cls: str          # qualified name (module.Class)
    path: str
    line: int
    verdict: str      # one of VERDICTS
    reason: str       # the first reason ("" where it runs)
    at: str           # file:line of that reason ("" where it runs)

    def to_dict(self) -> dict:
        return asdict(self)


@dataclass
class _Stop:
    reason: str
    at: str
    certain: bool     # on a path always taken


class _Tree:
    def __init__(self, results: list[FileResult], resolve, tree_names: set[str], frameworks, forwards: set[str],
                 runs_there):
        self.units = {qual: (r.path, u) for r in results for qual, u in (r.units or {}).items()}
        self.manual = {r.path: sorted(((d.line, d) for s in r.sites if not runs_there(s.api)
                                       for d in s.diagnostics if d.status == "manual"), key=lambda pair: pair[0])
                       for r in results}
        self.resolve, self.frameworks, self.forwards = resolve, frameworks, forwards
        self.names = tree_names | set(self.units)
        self.done: dict[str, tuple[_Stop | None, _Stop | None]] = {}

    def outside(self, qual: str) -> bool:
        top = qual.split(".")[0]
        return not (top in self.frameworks or top in STANDARD or qual in self.names)

    def stops(self, qual: str, seen: frozenset[str] = frozenset()) -> tuple[_Stop | None, _Stop | None]:
        """(the first reason on a path always taken, the first on a conditional one) for the unit `qual`."""
        if qual in self.done:
            return self.done[qual]
        path, u = self.units[qual]
        certain: _Stop | None = None
        maybe: _Stop | None = None

        def add(stop: _Stop) -> bool:
            nonlocal certain, maybe
            if stop.certain and certain is None:
                certain = stop
            elif not stop.certain and maybe is None:
                maybe = stop
            return certain is not None   # the first certain reason ends the search

        def inner(target: str, why: str, conditional: bool) -> bool:
            hard, soft = self.stops(target, seen | {qual})
            for s in (hard, soft):
                if s is not None and add(_Stop(f"{why} {_short(target)}, which {'will' if s.certain else 'may'} "
                                               f"not run: {s.reason}", s.at, s.certain and not conditional)):
                    return True
            return False

        for base in u.get("bases", ()):
            target = self.resolve(base)
            if target in self.units and target not in seen:
                if inner(target, "its base", False):
                    break
            elif target not in self.units and self.outside(target):
                if add(_Stop(f"its base {base} is outside the translated files: recompat cannot tell what it is, "
                             f"and left the class's methods as they are; translate the file that defines it "
                             f"together with this one", f"{path}:{u['line']}", True)):
                    break
        if certain is None:
            for owner, name in self._reached(qual):
                if self._method(*self.units[owner], name, add, inner, seen | {qual}):
                    break
        if not seen:   # a result cut short by a cycle is not kept
            self.done[qual] = (certain, maybe)
        return certain, maybe

    def based_outside(self, qual: str, seen: frozenset[str] = frozenset()) -> bool:
        """Does a base of `qual`, or of its bases in the tree, come from outside the translated files?"""
        for base in self.units[qual][1].get("bases", ()):
            target = self.resolve(base)
            if target in self.units:
                if target not in seen and self.based_outside(target, seen | {qual}):
                    return True
            elif self.outside(target):
                return True
        return False

    def _owner(self, qual: str, name: str, seen: frozenset[str] = frozenset()) -> str | None:
        """The class of the tree whose method `name` an instance of `qual` runs: its own, else a base's."""
        if name in self.units[qual][1]["methods"]:
            return qual
        for base in self.units[qual][1].get("bases", ()):
            target = self.resolve(base)
            if target in self.units and target not in seen and (found := self._owner(target, name, seen | {qual})):
                return found
        return None

    def _reached(self, qual: str) -> list[tuple[str, str]]:
        """(class, method) of each method an instance of `qual` runs: its class body, __init__, its forward, and
        those they call as self.<name>, found where the instance finds them (its class, else a base)."""
        todo = ["__init__", *sorted(self.forwards)]
        reached = [(qual, "")] if "" in self.units[qual][1]["methods"] else []
        reached += [(o, n) for n in todo if (o := self._owner(qual, n)) is not None]
        i = 0
        while i < len(reached):
            owner, name = reached[i]
            for call in self.units[owner][1]["methods"][name]["calls"]:
                if (o := self._owner(qual, call)) is not None and (o, call) not in reached:
                    reached.append((o, call))
            i += 1
        return reached

    def _method(self, path: str, u: dict, name: str, add, inner, seen) -> bool:
        m = u["methods"][name]
        spans = [(o["line"], o["end"]) for k, o in u["methods"].items() if k and k != name]
        first, last = (m["line"], m["end"]) if "line" in m else (u["line"], u["end"])
        for line, d in self.manual.get(path, ()):
            if first <= line <= last and not (name == "" and any(a <= line <= b for a, b in spans)):
                conditional = any(a <= line <= b for a, b in m["branches"])
                if add(_Stop(f"{d.code} {d.message}", f"{path}:{line}", not conditional)):
                    return True
        for use, conditional in m["uses"]:
            target = self.resolve(use)
            if target in self.units and target not in seen and inner(target, "it uses", conditional):
                return True
        return False


def class_verdicts(results: list[FileResult], resolve, tree_names: set[str], frameworks: tuple[str, ...],
                   forwards: set[str], runs_there=lambda api: False) -> list[ClassVerdict]:
    """A verdict for each model class of `results` (FileResult.units), and for each class with one of `forwards`
    (the source framework's forward method) that derives from something outside the translated files.
    `resolve`: a qualified name followed through the tree's re-exports to where it is defined
    (project.resolver); `tree_names`: what the tree's modules define (qualified); `frameworks`: the frameworks'
    top packages;
    `runs_there(api)`: does a manual site of this source API leave code the target runs (a method the target's
    Tensor has under the same name, `x.requires_grad_()`: unproven, but it runs)?"""
    tree = _Tree(results, resolve, tree_names, frameworks, forwards, runs_there)
    verdicts = []
    for qual, (path, u) in tree.units.items():
        if u["kind"] != "class":
            continue
        if not (u.get("model") or forwards & set(u["methods"]) and tree.based_outside(qual)):
            continue
        certain, maybe = tree.stops(qual)
        stop = certain or maybe
        verdict = RUNS if stop is None else WILL_NOT if stop.certain else MAY_NOT
        verdicts.append(ClassVerdict(qual, path, u["line"], verdict, stop.reason if stop else "",
                                     stop.at if stop else ""))
    return sorted(verdicts, key=lambda v: (v.path, v.line))


def _short(qual: str) -> str:
    return qual.rpartition(".")[2]


def add_notes(results: list[FileResult], verdicts: list[ClassVerdict]) -> None:
    """RC328 / RC329 on the file of each class that will not or may not run (a file note: it counts no site)."""
    from recompat import mappings

    specs = mappings.default().diagnostics
    by_path = {r.path: r for r in results}
    for v in verdicts:
        if v.verdict in NOTES:
            code = NOTES[v.verdict]
            at = "" if v.at == f"{v.path}:{v.line}" else f" (at {v.at})"
            message = specs[code]["message"].format(cls=_short(v.cls), reason=v.reason, at=at)
            by_path[v.path].notes.append(Diagnostic(code, specs[code]["status"], v.path, v.line, 1, message))
