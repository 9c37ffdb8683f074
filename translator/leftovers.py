"""Stage 3, both directions: on the settled output, every name of the source framework's checkpoint or recompute
family that is still there and that no rule reported is reported where it is, with a `# recompat:` line above its
statement, so no such reference stays unmarked.

Uses of the names mappings/reported.yaml lists for the side (RC160 from torch, RC260 from MindSpore), and the
imports of the side's names that stayed (RC161 / RC261). Working on the output, not the input: a name a rule
rewrote away is not reported, one a rule carried into its output is. An entry's API is stage 1's business.
A `settings_only` name of the package the file belongs to is not reported: the package's own code acts on those
settings, and is translated with it (mindformers' TransformerRecomputeConfig, met in mindformers itself).
"""
from __future__ import annotations

import ast
import functools

from recompat.mappings import Mappings, ReportedApi
from recompat.translator import edits, names, tree_index
from recompat.translator.results import Site
from recompat.translator.sites import SiteLog
from recompat.translator.source import Source

LABELS = {"torch": "torch", "mindspore": "MindSpore"}   # how a `# recompat:` line names the side


def side_entries(mappings: Mappings, side: str) -> dict:
    """The side's entries by every name of their API on that side (what stage 1 translates from it)."""
    return mappings.by_torch_name if side == "torch" else mappings.by_mindspore_name


@functools.lru_cache(maxsize=None)
def side_names(mappings: Mappings, side: str) -> frozenset[str]:
    """Every qualified name of the side's family: its entries' APIs and its reported names (not the methods)."""
    return frozenset({*side_entries(mappings, side),
                      *(n for r in mappings.reported if r.framework == side and r.kind != "method" for n in r.names)})


@functools.lru_cache(maxsize=None)
def family_words(mappings: Mappings, side: str) -> frozenset[str]:
    """The last word of each name of the side's family, of its older spellings (`older`: Cell.recompute_) and of
    its reported methods: what a use of one spells."""
    older = (n for e in side_entries(mappings, side).values() for n in getattr(e, side).get("older", ()))
    return frozenset({*(n.rsplit(".", 1)[-1] for n in (*side_names(mappings, side), *older)),
                      *(n.rsplit(".", 1)[-1] for r in mappings.reported if r.framework == side and r.kind == "method"
                        for n in r.names)})


def _bound_to_family(tree: ast.Module, words: frozenset[str]) -> set[str]:
    """The names the file's imports bind to a name with one of `words` in its path (`rc` in `from mindspore import
    recompute as rc`)."""
    return {name for stmt in names.imports(tree) for name, qual, _ in names.import_bindings(stmt)
            if qual and not words.isdisjoint(qual.split("."))}


def may_call_family(tree: ast.Module, mappings: Mappings, side: str, methods=frozenset()) -> bool:
    """Can stage 1's walk find a call to translate: one whose callee ends in a word of the side's family or of
    `methods` (`x.recompute()`, `ms.recompute(...)`, `recompute(...)`), or is a name an import binds to one? A
    name's qualified name comes from the imports only (names.Scope), so none of these means no such call."""
    words = family_words(mappings, side) | frozenset(methods)
    bound = _bound_to_family(tree, words)
    for call in tree_index.index(tree).of(ast.Call):
        f = call.func
        if f.__class__ is ast.Attribute and f.attr in words or f.__class__ is ast.Name and (f.id in words or
                                                                                           f.id in bound):
            return True
    return False


@functools.lru_cache(maxsize=None)
def _name_prefixes(mappings: Mappings, side: str) -> frozenset[str]:
    """The side's names and every module on the way to one: what an import must bind to matter here."""
    return frozenset(t.rsplit(".", i)[0] for t in side_names(mappings, side) for i in range(t.count(".") + 1))


@functools.lru_cache(maxsize=None)
def _reported_modules(mappings: Mappings, side: str) -> tuple[str, ...]:
    """`m.` for each reported module of the side: it covers every name under it, one imported from it too."""
    return tuple(r.api + "." for r in mappings.reported if r.framework == side and r.kind == "module")


class _Leftovers(names.ScopedWalker, SiteLog):
    """Stage 3's walk over the settled text: the side's reported.yaml names still used, each reported where it is."""

    def __init__(self, src: Source, tree: ast.Module, mappings: Mappings, side: str):
        super().__init__()
        self.src, self.tree, self.m, self.side, self.sites, self.comments = src, tree, mappings, side, [], set()
        self.entries = side_entries(mappings, side)
        self.bindings = [(stmt, *b) for stmt in names.imports(tree)
                         for b in names.import_bindings(stmt)]   # (statement, name, qualified name, alias)
        prefixes = _name_prefixes(mappings, side)
        modules = _reported_modules(mappings, side)
        self.interesting = {name for _, name, qual, _ in self.bindings
                            if qual in prefixes or (qual and qual.startswith(modules))}
        self.libraries = {qual.split(".")[0] for _, _, qual, _ in self.bindings if qual}
        self.own = src.package.split(".")[0] if src.package else None   # the top package of the file

    def _reported(self, qual: str) -> ReportedApi | None:
        """The reported.yaml entry that covers `qual`, unless it only holds settings of the file's own package."""
        api = self.m.reported_api(self.side, qual)
        return None if api is not None and api.settings_only and qual.split(".")[0] == self.own else api

    def worth_walking(self) -> bool:
        """Can the walk report anything? A reported name's last word is in the dotted name that uses it (an
        attribute on an imported name) or in the import its root name comes from."""
        words = family_words(self.m, self.side)
        bound = _bound_to_family(self.tree, words)
        index = tree_index.index(self.tree)
        if bound and any(n.id in bound for n in index.of(ast.Name)):
            return True
        for n in index.of(ast.Attribute):
            if n.attr in words and (self.m.reported_method(self.side, n.attr) is not None   # on any object
                                    or (chain := names.attribute_chain(n)) and chain[0] in self.interesting):
                return True
        return False

    def visit_Attribute(self, node):
        qual = self._qualname(node)
        if qual is not None and self._entry_api(qual):
            return                              # stage 1 rewrote or reported it
        if qual is not None and (api := self._reported(qual)) is not None:
            return self._report(node, api)     # one report per dotted name
        api = self.m.reported_method(self.side, node.attr)
        if api is not None and api.api.split(".")[0] in self.libraries:   # the file uses the method's library
            self._report(node, api)
        self.generic_visit(node)

    def visit_Name(self, node):
        qual = self._qualname(node)
        if qual is not None and not self._entry_api(qual) and (api := self._reported(qual)):
            self._report(node, api)

    def _qualname(self, node) -> str | None:
        chain = names.attribute_chain(node)
        if not chain or chain[0] not in self.interesting:
            return None
        root = self.scope.qualname(chain[0])
        return ".".join([root, *chain[1:]]) if root else None

    def _entry_api(self, qual: str) -> bool:
        """Is `qual` an entry's API or under one (stage 1's business)?"""
        parts = qual.split(".")
        return any(".".join(parts[:k]) in self.entries for k in range(1, len(parts) + 1))

    def _report(self, node, api: ReportedApi) -> None:
        # the codes are literals so that tests/test_mappings.py can check each message's fields
        code = "RC160" if self.side == "torch" else "RC260"
        site = self.site(node, api.api)
        self.diag(site, code, api=self.src.segment(node) if api.kind == "method" else api.api,
                  what=api.what["en"], library=api.library, instead=api.instead["en"])
        edits.comment_above(self.src, self.stmt, f"# recompat: {code} {api.api} left as it is: {api.what['en']}",
                            self.comments)

    def report_imports(self) -> None:
        """RC161 / RC261 for each import of one of the side's names that stayed, one `# recompat:` line per
        statement."""
        code = "RC161" if self.side == "torch" else "RC261"
        found = []
        for stmt, name, qual, alias in self.bindings:
            qual = alias.name if isinstance(stmt, ast.Import) and not alias.asname else qual
            if qual and (qual in self.entries or self._reported(qual)):
                found.append((stmt, name, qual, alias))
        if not found:
            return
        used, import_scope = names.binding_uses(self.tree, {name for _, name, _, _ in found})
        for stmt, name, qual, alias in found:
            why = ("code in this file still uses it (see the notes on those lines)"
                   if (import_scope[id(stmt)], name) in used else "nothing in this file uses it: remove the import")
            self.diag(self.site(alias, qual), code, api=qual, why=why)
        for stmt in dict.fromkeys(stmt for stmt, *_ in found):
            kept = ", ".join(q for s, _, q, _ in found if s is stmt)
            edits.comment_above(self.src, stmt, f"# recompat: {code} {LABELS[self.side]} names still imported: {kept}",
                                self.comments)


def report_leftovers(src: Source, tree: ast.Module, mappings: Mappings, side: str) -> list[Site]:
    """Stage 3 on the settled text of a file translated from `side` ("torch" or "mindspore"): the side's
    reported.yaml names still used, and the imports of its names that stayed, each reported where it is."""
    walker = _Leftovers(src, tree, mappings, side)
    if walker.worth_walking():
        walker.visit(tree)
    walker.report_imports()
    return walker.sites
