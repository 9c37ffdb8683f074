"""MindSpore -> torch: rewrite MindSpore's recompute sites into torch's activation checkpointing.

* `mindspore.recompute(block, *args, ...)` -> `torch.utils.checkpoint.checkpoint(block, *args, use_reentrant=...)`.
* A mark, `x.recompute(...)` on a Cell or an operator: where the class shows every use of `self.x` and each is a
  call, the mark goes and each call is checkpointed; elsewhere (a block built in a loop and put in a
  SequentialCell) a Cell is marked in place with torch's composable `checkpoint(x)`, which keeps parameter names.
* The spelling of older releases, `x.recompute_(mode=True)` (`older` in recompute.yaml), is read as the mark it
  stands for: mode True or left out marks as `recompute()` does (RC262); False, which turns recompute off, and a
  mode decided at run time are left to the user (RC290).
* Only MindSpore's: a `recompute` of an object whose type the file shows to be something else is not a site, nor
  one whose class in this file defines its own `recompute`; one whose type the file does not show is a manual
  site when the file uses MindSpore (RC290).

Every decision is a diagnostic on its site; stage 2 (imports) is shared with the other direction (edits.py).
"""
from __future__ import annotations

import ast
import functools
import re
from typing import NamedTuple

from recompat.mappings import Entry, Mappings
from recompat.translator import edits, leftovers, names, project, tree_index
from recompat.translator.results import Site
from recompat.translator.rules import Rules
from recompat.translator.sites import SiteLog, literal_flag
from recompat.translator.source import Source

CELL, PRIMITIVE, OTHER, UNKNOWN = project.CELL, project.PRIMITIVE, project.OTHER, "unknown"
# The rules a `source: mindspore` entry names: the function form (on calls), marks whose calls get checkpointed.
RULES = Rules("MindSpore -> torch recompute sites")



@functools.lru_cache(maxsize=None)
def import_markers(mappings: Mappings) -> re.Pattern:
    """Words one of which a file using a MindSpore recompute name must contain: the root module of each (mindspore,
    and the libraries of the reported names, such as mindformers). Derived from the mappings, not listed by hand."""
    roots = {n.split(".")[0] for n in leftovers.side_names(mappings, "mindspore")}
    return re.compile(rb"\b(?:" + "|".join(sorted(map(re.escape, roots))).encode() + rb")\b")


class _Walker(names.ScopedWalker):
    """Every recompute call, with its scope, class, function and statement."""

    def __init__(self, tx: MindSporeToTorch):
        super().__init__()
        self.tx = tx

    def visit_Call(self, node):
        self.generic_visit(node)
        tx = self.tx
        qual = tx.qualname(node.func, self.scope)
        where = (self.scope, self.stmt, self.cls, self.func)
        if qual in tx.apis and RULES.handler(tx.apis[qual].rule, "call"):
            tx.calls.append((node, tx.apis[qual], *where))
        elif qual is None and (shadowed := tx.shadowed(node.func, self.scope)) is not None:
            tx.shadowed_calls.append((node, shadowed, *where))
        elif (isinstance(node.func, ast.Attribute) and node.func.attr in tx.mark_methods
              and not (qual or "").startswith("mindspore")):
            tx.marks.append((node, *where))


class _Use(NamedTuple):
    node: ast.expr                 # a read of a name or of self.<attr>
    call: ast.Call | None          # the call it is the callee of
    configures: bool               # the object of a method call that is a statement of its own


class MindSporeToTorch(SiteLog):
    def __init__(self, src: Source, tree: ast.Module, mappings: Mappings, classes: project.Tree | None = None,
                 module: str | None = None):
        """`classes`: the package's modules (project.Tree), where a class, factory or attribute of another file
        is looked up; `module`: this file's dotted name."""
        self.src, self.tree, self.m = src, tree, mappings
        self.apis = mappings.by_mindspore_name
        self.function_entry = mappings.entry("recompute")
        self.cell_entry = mappings.entry("cell_recompute")
        self.primitive_entry = mappings.entry("primitive_recompute")
        # torch's checkpoint, and its composable form, which marks a module in place as MindSpore does
        self.checkpoint = self.function_entry.written("torch")
        # the parameters the rules act on, found by their role in the data (recompute.yaml)
        self.reentrant_kw = self.function_entry.role("reentrancy").mindspore     # MindSpore's name
        self.torch_reentrant_kw = self.function_entry.role("reentrancy").torch   # torch's
        self.composable = mappings.entry("composable_checkpoint").written("torch")
        # The method names of a mark: each mark entry's own, and the spellings of older releases (`older`), which
        # name the entry they stand for.
        marks = (self.cell_entry, self.primitive_entry)
        self.older = {n.rsplit(".", 1)[1]: (n, e) for e in marks for n in e.mindspore.get("older", ())}
        self.mark_methods = {n.rsplit(".", 1)[1] for e in marks for n in e.source_names} | set(self.older)
        # What builds a Cell, an operator (from frameworks.yaml). torch's modules count as Cells: a file half
        # translated (torch -> MindSpore -> torch) holds torch modules marked with recompute().
        frameworks = mappings.frameworks.values()
        self.cell_bases = frozenset(b for f in frameworks for b in f.model_bases)
        self.cell_modules = tuple(m for f in frameworks for m in f.layer_modules)
        self.primitive_modules = tuple(m for f in frameworks for m in f.operator_modules)
        self.calls: list = []
        self.marks: list = []
        self.shadowed_calls: list = []
        self.sites: list[Site] = []
        self.module_scope = names.build_scope(tree, None)
        self.uses_mindspore = any(q and (q == "mindspore" or q.startswith("mindspore."))
                                  for s in names.imports(tree)
                                  for _, q, _ in names.import_bindings(s))
        self.imports_needed: set[str] = set()   # torch modules the new code uses
        self.ms_names_rewritten: set[str] = set()   # names (`mindspore`, `ms`) that rewritten sites referred to
        self._comments: set = set()
        self._classes = {c.name: c for c in tree_index.index(tree).of(ast.ClassDef)}
        self.module = module or "<this file>"
        self.classes = classes or project.Tree(lambda _: None, frameworks)
        self.chained = self.classes.chained
        self.classes.add(self.module, tree)
        self._bindings: dict[int, dict] = {}   # id(owner) -> project.assignments(owner)
        self._use_cache: dict[int, dict] = {}  # id(owner) -> _uses(owner)
        self._layers: dict[int, tuple] = {}    # id(mark) -> (the layer whose one operator it marks, its class)
        self._parameter_kinds: dict[int, str] = {}   # id(mark) -> what every call passes, for a mark on a parameter
        self._paired: dict[int, int] = {}      # id(mark or undo) -> the line of the undo or mark it cancels out

    # -- resolution ------------------------------------------------------------------------

    def qualname(self, node, scope) -> str | None:
        chain = names.attribute_chain(node)
        if not chain:
            return None
        root = scope.qualname(chain[0])
        return None if root is None else ".".join([root, *chain[1:]])

    def shadowed(self, node, scope) -> str | None:
        """The name, when `node` names mindspore.recompute through a name something else binds too."""
        chain = names.attribute_chain(node)
        if chain and any(".".join([root, *chain[1:]]) in self.apis for root in scope.shadowed_imports(chain[0])):
            return chain[0]
        return None

    def _is_cell_class(self, name: str, scope, seen=()) -> bool | None:
        """Is the class called `name` here a Cell? None when the file does not show it."""
        qual = scope.qualname(name)
        if qual is not None:
            return qual in self.cell_bases or qual.startswith(self.cell_modules) or self._tree_verdict(qual)
        cls = self._classes.get(name)
        if cls is None or name in seen:
            return None
        verdicts = []
        for base in cls.bases:
            chain = names.attribute_chain(base)
            if chain is None:
                continue
            if len(chain) == 1 and chain[0] in self._classes:
                verdicts.append(self._is_cell_class(chain[0], scope, (*seen, name)))
            else:
                q = self.qualname(base, scope)
                verdicts.append(q is not None and (q in self.cell_bases or q.startswith(self.cell_modules))
                                or self._tree_verdict(q))
        if True in verdicts:
            return True
        return False if all(v is False for v in verdicts) else None

    def _tree_verdict(self, qual: str | None) -> bool | None:
        """Is the class `qual` a Cell, as the package's modules show (None: they do not show it)."""
        kind = self.classes.kind(qual)
        return True if kind == CELL else (False if kind in (OTHER, PRIMITIVE) else None)

    def _value_kind(self, value: ast.AST, scope, local=lambda name: []) -> str:
        """What an assigned value is: a Cell, an operator, something else, or unknown. `local`: the values bound
        to a name where the value was made (a class held in a variable, project.made_by)."""
        if not isinstance(value, (ast.Call, ast.Name, ast.IfExp)):
            return OTHER if isinstance(value, (ast.Constant, ast.JoinedStr, ast.Lambda, ast.List, ast.Dict)) \
                else UNKNOWN
        if isinstance(value, ast.Call) and (chain := names.attribute_chain(value.func)) is not None \
                and len(chain) == 1 and chain[0] in self._classes and scope.qualname(chain[0]) is None:
            verdict = self._is_cell_class(chain[0], scope)
            if verdict is not None:
                return CELL if verdict else OTHER
        made = project.made_by(value, scope, self.module, self.chained, local)
        return project.one([self.classes.kind(q) for q in made]) or UNKNOWN

    def _assignments(self, owner: ast.AST, target) -> list:
        """Values assigned to `target` (a Name id, or ('self', attr)) anywhere below owner (None for a binding
        not followed)."""
        return self._bound(owner).get(target, [])

    def _bound(self, owner: ast.AST) -> dict:
        if id(owner) not in self._bindings:
            self._bindings[id(owner)] = project.assignments(owner, tree_index.index(self.tree))
        return self._bindings[id(owner)]

    def _receiver_kind(self, mark: ast.Call, scope, cls, func) -> str:
        receiver = self._receiver(mark)
        if any(kw.arg in self._cell_only_keywords for kw in mark.keywords):
            return CELL   # keywords only Cell.recompute takes
        if isinstance(receiver, ast.Name) and receiver.id == "self" and cls is not None:
            verdict = self._is_cell_class(cls.name, self.module_scope)
            return CELL if verdict else (OTHER if verdict is False else UNKNOWN)
        local = lambda name: []
        if names.is_self_attr(receiver) and cls is not None:
            values, local = self._assignments(cls, ("self", receiver.attr)), project.bound_in(self._bound(cls))
        elif isinstance(receiver, ast.Name) and func is not None:
            values, local = self._assignments(func, receiver.id), project.bound_in(self._bound(func))
            if self.classes.one_kind(self.module, func, receiver.id) \
                    and self.classes.into_layers(self.module, cls, func, receiver.id):
                return CELL   # put in a SequentialCell or CellList
            if not values or None in values:   # a parameter, a loop variable: what the package's calls show
                kind = self.classes.expression_kind(self.module, cls, func, receiver)
                if kind is not None and not values:
                    self._parameter_kinds[id(mark)] = kind
                return kind if kind in (CELL, PRIMITIVE, OTHER) else UNKNOWN
        elif isinstance(receiver, ast.Call):    # ops.ReLU().recompute()
            return self._value_kind(receiver, scope)
        elif isinstance(receiver, ast.Attribute) and names.is_self_attr(receiver.value) and cls is not None:
            # self.softmax.softmax: what the class of self.softmax assigns to its own attribute softmax
            owners = [c for v in self._assignments(cls, ("self", receiver.value.attr))
                      for q in project.made_by(v, scope, self.module, self.chained, project.bound_in(self._bound(cls)))
                      for c in self.classes.made(q)]
            return project.one([self.classes.attribute_kind(q, receiver.attr) for q in owners]) or UNKNOWN
        else:
            return UNKNOWN
        kinds = {self._value_kind(v, scope, local) if v is not None else UNKNOWN for v in values}
        return kinds.pop() if len(kinds) == 1 else UNKNOWN

    def _receiver(self, mark: ast.Call) -> ast.expr:
        """What a mark marks: its object, or the layer whose one operator that is (_layer_of_operator)."""
        return self._layers[id(mark)][0] if id(mark) in self._layers else mark.func.value

    def _layer_of_operator(self, mark: ast.Call, scope, stmt, cls) -> tuple[ast.expr, str] | None:
        """`self.softmax.softmax.recompute()`, where every value of self.softmax is a layer whose construct runs
        the operator it holds in `softmax` and nothing else (frameworks.yaml `one_operator_layers`: nn.Softmax):
        (self.softmax, its class), a mark of the whole layer. Not for a mark that turns recompute off (that is
        the operator's own: RC215) or whose value is used."""
        receiver = mark.func.value
        if not (isinstance(receiver, ast.Attribute) and names.is_self_attr(receiver.value) and cls is not None
                and isinstance(stmt, ast.Expr) and stmt.value is mark and not self._undoes(mark)):
            return None
        values = self._assignments(cls, ("self", receiver.value.attr))
        if not values or None in values:
            return None
        local = project.bound_in(self._bound(cls))
        layers = {c for v in values for q in project.made_by(v, scope, self.module, self.chained, local)
                  for c in self.classes.made(q)}
        if len(layers) == 1 and self.classes.one_operator(layer := layers.pop()) == receiver.attr:
            return receiver.value, layer
        return None

    @property
    def _cell_only_keywords(self) -> set[str]:
        return {p.mindspore for p in self.cell_entry.params if p.parallel}

    # -- sites and diagnostics -------------------------------------------------------------

    def manual(self, site: Site, stmt: ast.stmt) -> None:
        """Leave the site as it is, with a `# recompat:` line above its statement repeating its last diagnostic."""
        last = site.diagnostics[-1]
        edits.comment_above(self.src, stmt, f"# recompat: {last.code} {last.message}", self._comments)

    # -- stage 1 ---------------------------------------------------------------------------

    def run(self) -> list[Site]:
        if leftovers.may_call_family(self.tree, self.m, "mindspore", self.mark_methods):
            _Walker(self).visit(self.tree)
        for node, entry, scope, stmt, cls, func in self.calls:
            RULES.handler(entry.rule, "call")(self, node, entry, scope, stmt)
        for node, name, scope, stmt, cls, func in self.shadowed_calls:
            site = self.site(node, self.function_entry.mindspore["api"])
            self.diag(site, "RC291", name=name, source=site.api)
            self.manual(site, stmt)
        for node, scope, stmt, cls, func in self.marks:
            if (layer := self._layer_of_operator(node, scope, stmt, cls)) is not None:
                self._layers[id(node)] = layer
        self._pair_undos()
        plans = self._mark_plans()
        for node, scope, stmt, cls, func in self.marks:
            self._mark(node, scope, stmt, cls, func, plans)
        self.classes.release(self.module)   # the tree is the file's: no other file keeps it alive
        self.sites.sort(key=lambda s: (s.line, s.col))
        return self.sites

    def _checkpoint_name(self) -> str:
        self.imports_needed.add(self.checkpoint.rsplit(".", 1)[0])
        return self.checkpoint

    # -- the function form -----------------------------------------------------------------

    @RULES.register("checkpoint_call", on="call")
    def _function_form(self, call: ast.Call, entry: Entry, scope, stmt) -> None:
        site = self.site(call, entry.mindspore["api"])
        if not call.args or isinstance(call.args[0], ast.Starred):
            self.diag(site, "RC290", target=self.src.segment(call.func), why="the block is not its first argument")
            return self.manual(site, stmt)
        chain = names.attribute_chain(call.func)
        if chain and len(chain) > 1:
            self.ms_names_rewritten.add(chain[0])
        kws = {k.arg: k for k in call.keywords if k.arg}
        block_keywords = [k.arg for k in call.keywords if k.arg and entry.param(k.arg) is None]
        dropped, forced = [], None
        for kw in call.keywords:
            value = self.src.segment(kw.value)
            if kw.arg is None:
                self.diag(site, "RC207", value=value)
                continue
            param = entry.param(kw.arg)
            if param is None or kw.arg == self.reentrant_kw:
                continue
            if self._none_context(site, param, kw):
                dropped.append(kw)
                continue
            if param.action == "drop":
                dropped.append(kw)
                if literal_flag(kw.value) is False:
                    self.diag(site, param.code, name=kw.arg, value=value, why=param.why)
                else:
                    self.diag(site, "RC204", name=kw.arg, value=value, why=param.why)
                    forced = f"{kw.arg}={value} makes MindSpore run non-reentrant"
            elif param.action == "rename":
                start = self.src.start(kw)
                self.src.replace(start, start + len(kw.arg), param.torch)
                self.diag(site, param.code, name=kw.arg, value=value, why=param.why)
            elif param.code:
                self.diag(site, param.code, name=kw.arg, value=value, why=param.why)
        if block_keywords:
            forced = forced or (f"the block gets keyword arguments ({', '.join(block_keywords)}), which torch's "
                                "reentrant checkpoint refuses")
        added = self._reentrancy(site, kws.get(self.reentrant_kw), forced)
        edits.remove_arguments(self.src, call, dropped)
        if added and (splat := edits.append_keywords(self.src, call, [added], dropped)) is not None:
            self.diag(site, "RC208", keywords=added, value=self.src.segment(splat.value))
        target = self._checkpoint_name()
        self.src.replace_node(call.func, target)
        self.diag(site, "RC200", source=entry.mindspore["api"], target=target)

    def _none_context(self, site: Site, param, kw: ast.keyword) -> bool:
        """context_fn=None is MindSpore's default, no contexts; torch calls its context_fn (None is not callable
        there) and its default is noop_context_fn: the keyword goes (RC209)."""
        if param.role == "context" and isinstance(kw.value, ast.Constant) and kw.value.value is None:
            self.diag(site, "RC209", name=kw.arg)
            return True
        return False

    def _reentrancy(self, site: Site, kw: ast.keyword | None, forced: str | None) -> str | None:
        """Decide torch's use_reentrant; edits a present keyword, returns the keyword text to add, if any."""
        if forced is not None:
            if kw is None:
                self.diag(site, "RC202", why=forced)
                return f"{self.torch_reentrant_kw}=False"
            if literal_flag(kw.value) is not False:
                self.src.replace_node(kw.value, "False")
                self.diag(site, "RC202", why=forced)
            return None
        if kw is None:
            self.diag(site, "RC201", value="True", why="MindSpore's default")
            return f"{self.torch_reentrant_kw}=False"
        flag = literal_flag(kw.value)
        if flag is not False:   # True, or decided at run time: either way torch's non-reentrant form agrees
            self.diag(site, "RC201", value=self.src.segment(kw.value),
                      why="as given" if flag is True else "decided at run time")
            self.src.replace_node(kw.value, "False")
        return None

    # -- marks -----------------------------------------------------------------------------

    def _pair_undos(self) -> None:
        """A mark turned off again (`recompute(False)`) on the same object: where the undo follows the mark in
        the same block, neither has an effect and both go (`_paired`: mark or undo -> the other's line; RC221).
        Elsewhere each goes on its own (RC215, RC222): torch gets neither."""
        def key(node, stmt, cls, func):
            assigned = self._assigned(node, stmt)
            return id(cls if cls is not None else func), ast.dump(node.func.value if assigned is None else assigned)

        marks, undos = {}, []
        for node, scope, stmt, cls, func in self.marks:
            if node.func.attr in self.older:
                continue
            if self._undoes(node):
                undos.append((node, stmt, cls, func))
            else:
                marks.setdefault(key(node, stmt, cls, func), []).append((node, stmt))
        for undo, stmt, cls, func in undos:
            found = marks.get(key(undo, stmt, cls, func), [])
            block = self._block(func, stmt) if func is not None and isinstance(stmt, ast.Expr) else []
            position = {id(b): i for i, b in enumerate(block)}
            earlier = [(m, s) for m, s in found if position.get(id(s), len(block)) < position.get(id(stmt), -1)]
            if found and len(earlier) == len(found):
                for mark, _ in earlier:
                    self._paired[id(mark)] = undo.lineno
                self._paired[id(undo)] = earlier[-1][0].lineno

    @staticmethod
    def _block(func, stmt: ast.stmt) -> list | None:
        """The statement list of `func` that holds `stmt` (a body, an orelse, a handler's body)."""
        for node in ast.walk(func):
            for field in ("body", "orelse", "finalbody"):
                block = getattr(node, field, None)
                if isinstance(block, list) and any(b is stmt for b in block):
                    return block
        return None

    def _mark_plans(self) -> dict:
        """For each `self.attr` marked by a statement of __init__'s own body (not under a condition or in a loop:
        the calls could not carry it), assigned only in __init__ before the mark, and whose every other use in its
        class is a call: those calls. A method call that is a statement of its own (`self.attr.shard(...)`) calls
        no operator and gives nothing away, so it is no use here."""
        plans = {}
        for node, scope, stmt, cls, func in self.marks:
            receiver = self._receiver(node) if isinstance(stmt, ast.Expr) and stmt.value is node else \
                self._assigned(node, stmt)   # `self.op = Op().recompute()`: the attribute
            if not (names.is_self_attr(receiver) and cls is not None and func is not None
                    and func.name == "__init__" and any(s is stmt for s in func.body)):
                continue
            attr = receiver.attr
            values = self._assignments(cls, ("self", attr))
            if (not values or None in values or len(self._assignments(func, ("self", attr))) != len(values)
                    or any(v.lineno > node.lineno for v in values)):
                continue
            uses = [u for u in self._uses(cls).get(("self", attr), []) if u.node is not receiver and not u.configures]
            if not uses or not all(u.call for u in uses):
                continue
            calls = [u.call for u in uses]
            plans[id(node)] = calls
        return plans

    def _uses(self, owner: ast.AST) -> dict:
        """Every read of a name or of `self.<attr>` under owner (keys as in project.assignments), each a _Use:
        the call it is the callee of, and whether it is the object of a method call that is a statement of its
        own (`self.op.shard(...)`: configures it, calls no operator). One walk per owner."""
        if id(owner) in self._use_cache:
            return self._use_cache[id(owner)]
        nodes = tree_index.index(self.tree).under(owner, ast.Call, ast.Expr, ast.Name, ast.Attribute)
        calls = {id(c.func): c for c in nodes if isinstance(c, ast.Call)}
        configured = {id(s.value.func.value) for s in nodes
                      if isinstance(s, ast.Expr) and isinstance(s.value, ast.Call)
                      and isinstance(s.value.func, ast.Attribute) and s.value.func.attr not in self.mark_methods}
        uses: dict = {}
        for n in nodes:
            if isinstance(n, ast.Name) and isinstance(n.ctx, ast.Load):
                key = n.id
            elif names.is_self_attr(n) and isinstance(n.ctx, ast.Load):
                key = ("self", n.attr)
            else:
                continue
            uses.setdefault(key, []).append(_Use(n, calls.get(id(n)), id(n) in configured))
        self._use_cache[id(owner)] = uses
        return uses

    def _mark(self, mark: ast.Call, scope, stmt, cls, func, plans: dict) -> None:
        if not self.uses_mindspore or self._own_method(mark, cls, func):
            return
        kind = self._receiver_kind(mark, scope, cls, func)
        if kind == OTHER:
            return
        target = self.src.segment(self._receiver(mark))
        if id(mark) in self._layers:   # the one operator a layer runs: an operator's mark
            kind = PRIMITIVE
        entry = self.primitive_entry if kind == PRIMITIVE else self.cell_entry
        api = entry.mindspore["api"]
        if mark.func.attr in self.older:
            api, entry = self.older[mark.func.attr]
        site = self.site(mark, api)
        if id(mark) in self._parameter_kinds:
            self.diag(site, "RC219", target=target, function=func.name, package=self.classes.package,
                      kind="a Cell" if kind == CELL else "an operator")
        leave = functools.partial(self._leave_mark, site, mark, stmt)
        if kind == PRIMITIVE and id(mark) in self._paired:   # (a Cell takes no recompute(False): RC216)
            return self._cancel(site, mark, stmt, self._paired[id(mark)])
        if kind == PRIMITIVE and entry is not self.primitive_entry:
            return leave(f"{target} is an operator, and {api} is a Cell's")
        if kind == UNKNOWN and (picked := self._picked_by_name(mark, func)) is not None:
            self.diag(site, "RC223", target=target, value=picked)
            return self.manual(site, stmt)
        if kind == UNKNOWN:
            where = "this file" if self.classes.package is None else \
                f"the {self.classes.package} package (this file included)"
            return leave(f"{where} does not show that {target} is a Cell or an operator")
        used = not (isinstance(stmt, ast.Expr) and stmt.value is mark) and self._assigned(mark, stmt) is None
        if kind == CELL and used:   # (an operator's mark gives its operator: it goes wherever it is)
            return leave("its value is used: mark the Cell in a statement of its own, then translate again")
        handler = RULES.handler(entry.rule, "mark")
        if handler is None:
            return leave(f"mapping entry {entry.id} names rule {entry.rule}, which does not apply to marks")
        handler(self, site, mark, stmt, entry, kind, plans.get(id(mark)), cls, func)

    def _picked_by_name(self, mark: ast.Call, func) -> str | None:
        """`getattr(layer, name)` with a name known only at run time, where the mark's object is that (or a local
        name whose every value is that): the code of that call, else None. Select recompute by name pattern."""
        receiver = self._receiver(mark)
        values = [receiver] if isinstance(receiver, ast.Call) else \
            self._assignments(func, receiver.id) if isinstance(receiver, ast.Name) and func is not None else []
        if values and all(isinstance(v, ast.Call) and isinstance(v.func, ast.Name) and v.func.id == "getattr"
                          and len(v.args) >= 2 and not isinstance(v.args[1], ast.Constant) for v in values):
            return self.src.segment(values[0])
        return None

    @staticmethod
    def _assigned(mark: ast.Call, stmt: ast.stmt) -> ast.expr | None:
        """`x = ops.ReLU().recompute()`: the name or `self.attr` the marked operator is assigned to (the mark
        returns its operator), else None."""
        if (isinstance(stmt, ast.Assign) and stmt.value is mark and len(stmt.targets) == 1
                and (isinstance(stmt.targets[0], ast.Name) or names.is_self_attr(stmt.targets[0]))):
            return stmt.targets[0]
        return None

    def _leave_mark(self, site: Site, mark: ast.Call, stmt: ast.stmt, why: str) -> None:
        """RC290: the mark stays as it is, with a `# recompat:` comment saying why."""
        self.diag(site, "RC290", target=self.src.segment(mark.func), why=why)
        self.manual(site, stmt)

    @RULES.register("checkpoint_calls", on="mark")
    def _mark_calls(self, site: Site, mark: ast.Call, stmt: ast.stmt, entry: Entry, kind: str,
                    calls: list | None, cls, func) -> None:
        """The mark goes and the calls in sight are checkpointed; else a Cell is marked in place (composable)."""
        target = self.src.segment(self._receiver(mark))
        leave = functools.partial(self._leave_mark, site, mark, stmt)
        if self._undoes(mark):
            return self._undo(site, mark, stmt, kind)
        options = self._mark_options(site, mark, entry)
        if isinstance(options, str):
            return leave(options)
        if calls is not None:
            return self._checkpoint_calls(site, mark, stmt, calls, options)
        if (assigned := self._assigned(mark, stmt)) is not None:   # `self.block = Block().recompute()`
            return leave("its value is used: mark the Cell in a statement of its own, then translate again")
        options.pop(self.torch_reentrant_kw, None)
        self.imports_needed.add(self.composable.rsplit(".", 1)[0])
        args = ", ".join([target, *(f"{k}={v}" for k, v in options.items())])
        self.src.replace_node(stmt, f"{self.composable}({args})")
        self.diag(site, "RC211", target=target)

    @RULES.register("drop_mark", on="mark")
    def _drop_mark(self, site: Site, mark: ast.Call, stmt: ast.stmt, entry: Entry, kind: str,
                   calls: list | None, cls, func) -> None:
        """An operator's mark goes (RC222): torch keeps an operator's output for the backward of the operator that
        uses it, so a checkpoint around one operator saves nothing and keeps its inputs too (measured,
        bench/selective_bench.py)."""
        if self._undoes(mark):
            return self._undo(site, mark, stmt, kind)
        self._remove_mark(mark, stmt)
        self.diag(site, "RC222", target=self.src.segment(self._receiver(mark)))

    def _undoes(self, mark: ast.Call) -> bool:
        """`op.recompute(False)` / `recompute(mode=False)`: the call turns recompute off instead of marking."""
        if mark.func.attr in self.older:
            return False    # recompute_(mode=False): _older_mark says what it does
        flag = self.primitive_entry.role("mark").mindspore
        mode = mark.args[0] if mark.args else next((k.value for k in mark.keywords if k.arg == flag), None)
        return isinstance(mode, ast.Constant) and mode.value is False

    def _undo(self, site: Site, mark: ast.Call, stmt: ast.stmt, kind: str) -> None:
        """Turning recompute off is torch's default: the call goes (a statement) or gives its operator (a value)."""
        target = self.src.segment(self._receiver(mark))
        self._remove_mark(mark, stmt)
        self.diag(site, "RC215" if kind == PRIMITIVE else "RC216", target=target,
                  args=", ".join(self.src.segment(a) for a in [*mark.args, *mark.keywords]))

    def _cancel(self, site: Site, mark: ast.Call, stmt: ast.stmt, other: int) -> None:
        """A mark and the undo that follows it in the same block (RC221): neither is carried; a mark used as a
        value gives its operator."""
        self._remove_mark(mark, stmt)
        self.diag(site, "RC221", target=self.src.segment(mark.func.value), line=other)

    def _remove_mark(self, mark: ast.Call, stmt: ast.stmt) -> None:
        """The mark goes: its statement, or, where its value is used, the call (it gives its operator)."""
        if isinstance(stmt, ast.Expr) and stmt.value is mark:
            edits.delete_statement(self.src, self.tree, stmt)
        else:
            self.src.replace_node(mark, self.src.segment(mark.func.value))

    def _mark_options(self, site: Site, mark: ast.Call, entry: Entry) -> dict | str:
        """torch keyword -> value text for the checkpoint calls, or why the mark cannot be converted."""
        if mark.func.attr in self.older:
            return self._older_mark(site, mark, entry)
        if entry is self.primitive_entry:
            flag = entry.role("mark").mindspore
            mode = mark.args[0] if mark.args else next((k.value for k in mark.keywords if k.arg == flag), None)
            if mode is not None and not (isinstance(mode, ast.Constant) and mode.value is True):
                return f"mode={self.src.segment(mode)} (only mode=True marks the operator)"
            return {self.torch_reentrant_kw: "False"}
        if mark.args:
            return "Cell.recompute takes keyword arguments only"
        options: dict[str, str] = {}
        forced = False
        for kw in mark.keywords:
            if kw.arg is None:
                return f"its options come from **{self.src.segment(kw.value)}"
            param = entry.param(kw.arg)
            value = self.src.segment(kw.value)
            if param is None or param.role == "mark":   # a mark row is the older spelling's flag
                return f"{kw.arg} is not a Cell.recompute option (MindSpore raises ValueError)"
            if self._none_context(site, param, kw):
                continue
            if param.action == "drop":
                if param.parallel:
                    self.diag(site, param.code, name=kw.arg, value=value, why=param.why)
                elif literal_flag(kw.value) is False:
                    self.diag(site, param.code, name=kw.arg, value=value, why=param.why)
                else:
                    self.diag(site, "RC204", name=kw.arg, value=value, why=param.why)
                    forced = True
                continue
            if param.code and kw.arg != self.reentrant_kw:
                self.diag(site, param.code, name=kw.arg, value=value, why=param.why)
            options[param.torch] = value
        if forced:
            options[self.torch_reentrant_kw] = "False"
        return options

    def _older_mark(self, site: Site, mark: ast.Call, entry: Entry) -> dict | str:
        """`x.recompute_(mode)`, the spelling of older releases: mode True (or left out) marks the Cell as
        `x.recompute()` does; anything else is why it stays."""
        method, flag = mark.func.attr, entry.role("mark").mindspore
        if len(mark.args) > 1 or any(k.arg != flag for k in mark.keywords):
            return f"{method} takes {flag} only"
        mode = mark.args[0] if mark.args else next((k.value for k in mark.keywords if k.arg == flag), None)
        if isinstance(mode, ast.Constant) and mode.value is False:
            return (f"{flag}={self.src.segment(mode)} turns recompute off for the Cell and marks nothing; torch has no "
                    "mark to turn off: delete the call (and, if it undoes a mark, the checkpoint that mark became)")
        if mode is not None and not (isinstance(mode, ast.Constant) and mode.value is True):
            return (f"{flag}={self.src.segment(mode)} is decided at run time: True marks the Cell (torch: checkpoint "
                    "its calls), False turns recompute off")
        self.diag(site, "RC262", target=self.src.segment(self._receiver(mark)), method=method,
                  args=", ".join(self.src.segment(a) for a in [*mark.args, *mark.keywords]))
        return {}

    def _own_method(self, mark: ast.Call, cls, func) -> bool:
        """Is the receiver an instance of this file's classes, each of which defines (or inherits from a class of
        this file) a method of the mark's name? Then the call is that method, not MindSpore's mark."""
        receiver, method = self._receiver(mark), mark.func.attr
        if isinstance(receiver, ast.Name) and receiver.id == "self" and cls is not None:
            classes = [cls.name]
        else:
            if names.is_self_attr(receiver) and cls is not None:
                values = self._assignments(cls, ("self", receiver.attr))
            elif isinstance(receiver, ast.Name):
                values = self._assignments(func or self.tree, receiver.id)
            else:
                values = [receiver]
            classes = [v.func.id if isinstance(v, ast.Call) and isinstance(v.func, ast.Name) else None
                       for v in values]
        return bool(classes) and all(c is not None and self._defines(c, method) for c in classes)

    def _defines(self, name: str, method: str, seen=()) -> bool:
        """Does this file's class `name`, or one of its bases in this file, define `method`?"""
        cls = self._classes.get(name)
        if cls is None or name in seen:
            return False
        if any(isinstance(s, (ast.FunctionDef, ast.AsyncFunctionDef)) and s.name == method for s in cls.body):
            return True
        return any(isinstance(b, ast.Name) and self._defines(b.id, method, (*seen, name)) for b in cls.bases)

    def _checkpoint_calls(self, site: Site, mark: ast.Call, stmt: ast.stmt, calls: list, options: dict) -> None:
        """Delete the mark (a mark used as a value gives its operator); checkpoint each call of the marked
        attribute."""
        assigned = self._assigned(mark, stmt)
        target = self.src.segment(self._receiver(mark) if assigned is None else assigned)
        name = self._checkpoint_name()
        reentrant = options.get(self.torch_reentrant_kw)
        if reentrant is None:
            self.diag(site, "RC201", value="True", why="Cell.recompute's default")
            reentrant = "False"
        elif reentrant != "False":
            self.diag(site, "RC201", value=reentrant, why="as given" if reentrant == "True" else "decided at run time")
            reentrant = "False"
        extra = ", ".join(f"{k}={v}" for k, v in {**options, self.torch_reentrant_kw: reentrant}.items())
        for call in calls:
            src, text = self.src, self.src.text
            self.src.insert(src.start(call), f"{name}(")
            arguments = [*call.args, *call.keywords]
            open_paren = text.index("(", src.end(call.func))
            if arguments:
                line_rest = text[open_paren + 1:text.find("\n", open_paren) % (len(text) + 1)]
                src.replace(src.end(call.func), open_paren + 1, "," if not line_rest.strip() else ", ")
                last = max(arguments, key=lambda n: (n.end_lineno, n.end_col_offset))
                src.insert(src.end(last), f", {extra}")
            else:
                src.replace(src.end(call.func), src.end(call), f", {extra})")
        self._remove_mark(mark, stmt)
        lines = ", ".join(f"line {c.lineno}" for c in calls)
        self.diag(site, "RC210", target=target, calls=lines)


def settle_imports(src: Source, tree: ast.Module, mappings: Mappings, needed: set[str], ms_names: set[str]) -> None:
    """Remove imports of mindspore.recompute (and `import mindspore` where only rewritten sites used it) that
    nothing uses any more; add the torch imports the new code uses."""
    apis = set(mappings.entry("recompute").source_names)
    module = names.build_scope(tree, None)
    exact = {module.qualname(n) for n in ms_names} - {None}
    edits.settle_imports(src, tree, modules=apis, exact=exact, additions=[(m, None) for m in sorted(needed)])
