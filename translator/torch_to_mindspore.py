"""torch -> MindSpore: rewrite torch's activation-checkpointing sites into MindSpore's recompute.

Two stages. Stage 1 finds every use of a mapped torch API (resolved through the file's imports
and scopes) and rewrites its span per the rule its mapping entry names. Stage 2 re-parses the
result and settles imports and support code: it adds what the new code uses and removes torch
checkpoint imports left unused. Every decision is a diagnostic on its site.
"""
from __future__ import annotations

import ast
import functools
import re
from collections import Counter, defaultdict
from dataclasses import dataclass, field

from recompat.constants import DEFAULT_STYLE
from recompat.mappings import Entry, Mappings, Param, same, signature_arguments
from recompat.translator import edits, names, tree_index
from recompat.translator.edits import remove_arguments
from recompat.translator.results import Site
from recompat.translator.rules import Rules
from recompat.translator.sites import SiteLog, literal_flag
from recompat.translator.source import Source

PARTIAL = "functools.partial"
RULES = Rules("torch -> MindSpore checkpoint sites")


@functools.lru_cache(maxsize=None)
def import_markers(mappings: Mappings) -> re.Pattern:
    """Text that a file using any mapped torch API must contain: the API's module path (an alias
    may stand for its root: `th.utils.checkpoint`) or `from <parent> import ... <module>`.

    Lets a file be passed over without parsing it; derived from the mappings, not listed by hand."""
    alternatives = set()
    for api in checkpoint_names(mappings):
        parts = api.split(".")[:-1]
        alternatives.add(re.escape(".".join(parts[1:])) if len(parts) > 1 else rf"\b{re.escape(parts[0])}\b")
        if len(parts) > 1:
            parent, leaf = re.escape(".".join(parts[:-1])), re.escape(parts[-1])
            alternatives.add(rf"from\s+{parent}\s+import\s+(?:\([^)]*?|[^\n]*?)\b{leaf}\b")
            # a relative import of it, from inside its own library: `from ..parent import leaf`
            alternatives.add(rf"from\s+\.+(?:[\w.]*\b{re.escape(parts[-2])})?\s+import\s+(?:\([^)]*?|[^\n]*?)\b{leaf}\b")
    alternatives |= {rf"\.{re.escape(r.api.rsplit('.', 1)[1])}\b" for r in mappings.reported
                     if r.framework == "torch" and r.kind == "method"}
    return re.compile("|".join(sorted(alternatives)).encode())


@functools.lru_cache(maxsize=None)
def checkpoint_names(mappings: Mappings) -> frozenset[str]:
    """Every qualified torch name of the checkpoint family: the entries' APIs and the reported names (reported.yaml)."""
    return frozenset({*mappings.by_torch_name, *(n for r in mappings.reported if r.framework == "torch"
                                                 and r.kind != "method" for n in r.names)})


@functools.lru_cache(maxsize=None)
def _name_prefixes(mappings: Mappings) -> frozenset[str]:
    """The checkpoint names and every module on the way to one: what an import must bind to matter here."""
    targets = {*checkpoint_names(mappings), PARTIAL}
    return frozenset(t.rsplit(".", i)[0] for t in targets for i in range(t.count(".") + 1))


@functools.lru_cache(maxsize=None)
def _api_words(mappings: Mappings) -> frozenset[str]:
    """The last word of each mapped torch API's name: what a dotted use of one ends in."""
    return frozenset(t.rsplit(".", 1)[-1] for t in mappings.by_torch_name)


def _interesting(tree: ast.Module, mappings: Mappings) -> set[str]:
    """Names some import binds to a checkpoint name or a module on the way to one: only these can resolve to one,
    every other name is passed over without a scope lookup."""
    prefixes = _name_prefixes(mappings)
    return {name for stmt in names.imports(tree)
            for name, qual, _ in names.import_bindings(stmt) if qual in prefixes}


@dataclass
class Event:
    """One thing stage 1 saw, handled after the walk (in post-order, inner first)."""

    kind: str                 # call | partial | ref | holder_call | shadowed | op
    node: ast.AST
    scope: names.Scope
    stmt: ast.stmt
    cls: ast.ClassDef | None
    entry: Entry | None = None
    holder: str | None = None   # holder_call: the holder's key; shadowed: the name
    op: str | None = None       # op: what it names under torch.ops (aten.mm.default)

    @property
    def api_node(self) -> ast.AST:
        """The expression that names the API: a call's callee, a partial's first argument, else the node."""
        if self.kind == "call":
            return self.node.func
        return self.node.args[0] if self.kind == "partial" else self.node


@dataclass
class Holder:
    """A name or `self.attr` that holds torch's checkpoint (directly or as functools.partial)."""

    reentrant: object = True   # True | False | "dynamic": what the held partial fixes
    keywords: set = field(default_factory=set)


class _Walker(names.ScopedWalker):
    """Stage 1's walk: the events, with their scopes, classes and statements."""

    def __init__(self, tx: TorchToMindSpore):
        super().__init__()
        self.tx = tx
        self.handled: set[int] = set()      # ids of API references consumed by a call or partial

    def _event(self, kind, node, **kw):
        self.tx.events.append(Event(kind, node, self.scope, self.stmt, self.cls, **kw))

    def visit_Call(self, node):
        self.generic_visit(node)
        tx = self.tx
        if tx.op_reference(node.func, self.scope) is not None:
            self.handled.add(id(node.func))     # a call through torch.ops runs a torch kernel: not an op reference
            return
        qual = tx.qualname(node.func, self.scope)
        if qual in tx.apis:
            self.handled.add(id(node.func))
            self._event("call", node, entry=tx.apis[qual])
        elif qual == PARTIAL and node.args and tx.qualname(node.args[0], self.scope) in tx.apis:
            self.handled.add(id(node.args[0]))
            self._event("partial", node, entry=tx.apis[tx.qualname(node.args[0], self.scope)])
        elif (shadowed := tx.shadowed_api(node.func, self.scope)) is not None:
            self.handled.add(id(node.func))
            self._event("shadowed", node, entry=shadowed[1], holder=shadowed[0])
        elif _holder_key(node.func) is not None and node.args:
            self._event("holder_call", node, holder=_holder_key(node.func))

    def visit_Attribute(self, node):
        op = self.tx.op_reference(node, self.scope)
        if op is not None:
            self._event("op", node, op=op)
            return
        qual = self.tx.qualname(node, self.scope)
        if qual in self.tx.apis:
            self._event("ref", node, entry=self.tx.apis[qual])
            return  # the inner part of the chain is a module, not an API
        self.generic_visit(node)

    def visit_Name(self, node):
        qual = self.tx.qualname(node, self.scope)
        if qual in self.tx.apis:
            self._event("ref", node, entry=self.tx.apis[qual])

    def visit_Assign(self, node):
        self.generic_visit(node)
        if (isinstance(node.targets[0], ast.Name) and len(node.targets) == 1
                and (entry := self.tx.wrapper_partial(node.value, self.scope)) is not None):
            self.tx.wrapper_partials[node.targets[0].id] = (node.value, entry)
        if len(node.targets) == 1 and _holder_key(node.targets[0]) is not None:
            held = self._held_checkpoint(node.value)
            if held is not None:
                key = _holder_key(node.targets[0])
                self.tx.holders[key] = held
                if key.startswith("."):
                    self.tx.own_holders.append(key[1:])

    def _held_checkpoint(self, value) -> Holder | None:
        """A Holder when `value` is torch's checkpoint or functools.partial(checkpoint, ...)."""
        tx = self.tx
        if tx.apis.get(tx.qualname(value, self.scope), None) is tx.checkpoint:
            return Holder()
        if (isinstance(value, ast.Call) and tx.qualname(value.func, self.scope) == PARTIAL and value.args
                and tx.apis.get(tx.qualname(value.args[0], self.scope)) is tx.checkpoint):
            kws = {k.arg: k.value for k in value.keywords}
            flag = tx.reentrant_kw
            reentrant = literal_flag(kws[flag]) if flag in kws else True
            if any(k.arg is None for k in value.keywords):
                reentrant = "dynamic"
            return Holder(reentrant=reentrant, keywords=set(kws))
        return None


@functools.lru_cache(maxsize=None)
def _keywords_of(signature: str) -> frozenset[str]:
    """The parameters a recorded signature takes by keyword."""
    a = signature_arguments(signature)
    return frozenset(x.arg for x in (*a.args, *a.kwonlyargs))


def _holder_key(node) -> str | None:
    """'name' for a plain name, '.attr' for `<anything>.attr`: how holders are looked up."""
    if isinstance(node, ast.Name):
        return node.id
    if isinstance(node, ast.Attribute):
        return "." + node.attr
    return None


class TorchToMindSpore(SiteLog):
    def __init__(self, src: Source, tree: ast.Module, mappings: Mappings, style: str = DEFAULT_STYLE,
                 external_holders=()):
        self.src, self.tree, self.m, self.style = src, tree, mappings, style
        self.apis = mappings.by_torch_name
        self.checkpoint = mappings.entry("checkpoint")
        # the checkpoint parameters the rules act on, found by their role in the data (checkpoint.yaml)
        reentrancy = self.checkpoint.role("reentrancy")
        self.reentrant_kw = reentrancy.torch
        self.non_reentrant, self.reentrant = f"{reentrancy.mindspore}=False", f"{reentrancy.mindspore}=True"
        self.rng_kw = self.checkpoint.role("rng_state").torch
        self.context_kw = self.checkpoint.role("context").torch
        self.selective = mappings.selective
        self.runtime_used = False              # the output uses recompat's runtime (selective.yaml's module)
        self.selective_nodes: set[int] = set()   # ids of the nodes naming a selective-checkpointing name
        self.events: list[Event] = []
        # attributes that other files of the project assign torch's checkpoint to (HF's
        # _gradient_checkpointing_func is set in a base class, called in every model file)
        self.holders: dict[str, Holder] = {"." + a: Holder(reentrant="dynamic") for a in external_holders}
        self.own_holders: list[str] = []
        # name -> (functools.partial(checkpoint_wrapper, ...), the wrapper's entry)
        self.wrapper_partials: dict[str, tuple[ast.Call, Entry]] = {}
        self.api_roots: set = set()   # (name, what it is bound to) the API uses start with: ("th", "torch")
        self.sites: list[Site] = []
        self.support: dict[str, str] = {}     # name -> code of each function the translation adds (support code)
        # Only names that some import binds to a mapped API (or a module on the way to one) can
        # resolve to one: every other name is passed over without a scope lookup.
        self.leaves = _api_words(mappings) | {PARTIAL.rsplit(".", 1)[-1]}
        self.interesting = _interesting(tree, mappings)
        self.module_scope = module_scope = names.build_scope(tree, None)
        self.ms = next((n for n, q in module_scope.imports.items() if q == "mindspore"
                        and n not in module_scope.other), "mindspore")
        self.ms_used = False
        self.uses_dropout = "ropout" in src.text   # Dropout, dropout: see RC150
        self._comments: set = set()

    # -- resolution ------------------------------------------------------------------------

    def qualname(self, node, scope: names.Scope) -> str | None:
        chain = names.attribute_chain(node)
        if not chain or chain[0] not in self.interesting or (len(chain) > 1 and chain[-1] not in self.leaves):
            return None
        root = scope.qualname(chain[0])
        if root is None:
            return None
        return ".".join([root, *chain[1:]])

    def op_reference(self, node, scope: names.Scope) -> str | None:
        """What `node` names under torch.ops (selective.yaml's runtime/torch_ops): the op (`aten.mm.default`) for
        torch.ops.<namespace>.<op>.<overload>, `aten.mm` for a packet, `aten` for a namespace, "" for torch.ops."""
        chain = names.attribute_chain(node)
        if not chain or len(chain) < 2 or chain[0] not in self.interesting:
            return None
        root = scope.qualname(chain[0])
        prefix = self.selective.runtime.get("torch_ops")
        if root is None or prefix is None:
            return None
        qual = ".".join([root, *chain[1:]])
        if qual == prefix:
            return ""
        rest = qual[len(prefix) + 1:].split(".") if qual.startswith(prefix + ".") else []
        return ".".join(rest) if 1 <= len(rest) <= 3 else None

    def shadowed_api(self, node, scope: names.Scope) -> tuple[str, Entry] | None:
        """(name, entry) when `node` names a mapped API through a name that something else binds too."""
        chain = names.attribute_chain(node)
        if not chain or chain[0] not in self.interesting or (len(chain) > 1 and chain[-1] not in self.leaves):
            return None
        for root in sorted(scope.shadowed_imports(chain[0])):
            entry = self.apis.get(".".join([root, *chain[1:]]))
            if entry is not None:
                return chain[0], entry
        return None

    def wrapper_partial(self, node, scope: names.Scope) -> Entry | None:
        """The wrapper entry when `node` is functools.partial(<a mark_cell entry's API>, ...)."""
        if isinstance(node, ast.Call) and node.args and self.qualname(node.func, scope) == PARTIAL:
            entry = self.apis.get(self.qualname(node.args[0], scope))
            if entry is not None and entry.rule == "mark_cell":
                return entry
        return None

    # -- stage 1 ---------------------------------------------------------------------------

    def may_find_sites(self) -> bool:
        """Can the walk find anything to translate? What it reports names a mapped API, functools.partial of one
        or a holder, through a dotted name ending in an API's last word or a holder's name, or through a name an
        import binds to an API (a name under torch.ops counts only beside a selective-checkpointing API). Names
        resolve through imports only (names.Scope), so where the file's index shows none of these, the walk finds
        nothing: most files that merely mention checkpointing."""
        words = _api_words(self.m) | {h[1:] for h in self.holders if h.startswith(".")}
        bound = {name for stmt in names.imports(self.tree)
                 for name, qual, _ in [*names.import_bindings(stmt), *names.star_bindings(stmt)] if qual in self.apis}
        index = tree_index.index(self.tree)
        return any(n.attr in words for n in index.of(ast.Attribute)) or any(
            n.id in bound or n.id in self.holders for n in index.of(ast.Name))

    def run(self) -> list[Site]:
        walker = _Walker(self)
        if self.may_find_sites():
            walker.visit(self.tree)
        for ev in self.events:
            chain = names.attribute_chain(ev.api_node) if ev.entry is not None else None
            if chain:
                self.api_roots.add((chain[0], ev.scope.qualname(chain[0])))
        self.selective_nodes = {id(ev.api_node) for ev in self.events
                                if ev.entry is not None and ev.entry.rule == "runtime_name"}
        cell_style = self._cell_style_plan() if self.style == "cell" else {}
        given = (self._argument(ev.node, ev.entry, ev.entry.role("wrapper_fn"))
                 for ev in self.events if ev.kind == "call" and ev.entry.rule == "mark_tree")
        self.wrapper_fn_args = {id(node) for node in given if node is not None}   # each decided by its call
        for ev in self.events:
            if ev.kind == "ref" and (id(ev.node) in walker.handled or id(ev.node) in self.wrapper_fn_args):
                continue   # the call it is in, or the apply_activation_checkpointing it is passed to, decides it
            if ev.kind == "holder_call":
                holder = self.holders.get(ev.holder)
                if holder is None or (ev.holder.startswith(".") and not isinstance(ev.node.func, ast.Attribute)):
                    continue
                self._holder_call(ev, holder)
            elif ev.kind == "partial":
                if id(ev.node) not in self.wrapper_fn_args:   # else the apply_activation_checkpointing it is in
                    self._partial(ev)
            elif ev.kind == "ref":
                self._reference(ev)
            elif ev.kind == "op":
                # only where the file uses torch's selective checkpointing: elsewhere (an FX pass matching
                # node.target) an op reference is not a policy's, and stays torch's
                if id(ev.node) not in walker.handled and self.selective_nodes:
                    self._op_reference(ev)

            elif ev.kind == "shadowed":
                site = self.site(ev.node, ev.entry.torch["api"])
                self.manual(ev, site, shadowed=ev.holder)
            else:
                RULES.handler(ev.entry.rule)(self, ev, cell_style)
        return self.sites

    def manual(self, ev: Event, site: Site, why: str | None = None, shadowed: str | None = None) -> None:
        """Leave the site as it is, with a diagnostic and a `# recompat:` line above its statement.

        `shadowed`: the site's name is bound to the API and to something else (RC191), not `why` (RC190)."""
        if shadowed is None:
            self.diag(site, "RC190", source=site.api, why=why)
            comment = f"# recompat: RC190 {site.api} left as it is: {why}"
        else:
            self.diag(site, "RC191", name=shadowed, source=site.api)
            comment = f"# recompat: RC191 {site.api} left as it is: {shadowed} is also bound to something else here"
        edits.comment_above(self.src, ev.stmt, comment, self._comments)

    def ms_name(self, name: str) -> str:
        self.ms_used = True
        return f"{self.ms}.{name}"

    # -- the callable passed to checkpoint --------------------------------------------------

    def _callable(self, ev: Event, site: Site, node: ast.AST) -> tuple[ast.AST, object]:
        """(the node that ends up as the block, is_cell: True / False / None for unknown).

        `m.__call__` and `m.forward` become `m`: MindSpore recomputes the Cell itself."""
        if isinstance(node, ast.Attribute) and node.attr in ("__call__", "forward") and not (
                isinstance(node.value, ast.Name) and node.value.id == "self"):
            # from the dot: `(m).__call__` keeps its parentheses
            dot = self.src.text.rindex(".", self.src.end(node.value), self.src.end(node) - len(node.attr))
            start = len(self.src.text[:dot].rstrip(" \t"))
            self.src.replace(max(start, self.src.end(node.value)), self.src.end(node), "")
            self.diag(site, "RC102", expr=self.src.segment(node), base=self.src.segment(node.value))
            return node.value, True
        return node, self._is_cell(node, ev.scope)

    def _is_cell(self, node, scope: names.Scope):
        if isinstance(node, ast.Lambda):
            return False
        if isinstance(node, ast.Name):
            found = scope.lookup(node.id)
            kind = found.kinds.get(node.id) if found else None
        elif isinstance(node, ast.Attribute) and isinstance(node.value, ast.Name) and node.value.id == "self":
            kind = scope.class_attrs.get(node.attr)
        elif isinstance(node, ast.Subscript):
            kind = names.CELL if names.scope_container_kind(scope, node.value) == names.CONTAINER else None
        else:
            kind = None
        return {names.CELL: True, names.FUNCTION: False}.get(kind)

    # -- keywords --------------------------------------------------------------------------

    def _positional_drops(self, call: ast.Call, entry: Entry, site: Site) -> list | str:
        """The positional arguments whose parameter is dropped (Megatron's distribute_saved_activations), each
        with its diagnostic; a str says why they cannot be told apart from the block's inputs."""
        dropped = []
        for param in entry.params:
            k = entry.position(param)
            if not k or param.action != "drop":
                continue
            if k >= len(call.args) or any(isinstance(a, ast.Starred) for a in call.args[:k + 1]):
                return f"its {param.torch} argument cannot be told apart from the block's inputs"
            value = self.src.segment(call.args[k])
            does_nothing = param.torch_default is not None and same(value, param.torch_default)
            self.diag(site, "RC113" if does_nothing else param.code, name=param.torch, value=value,
                      why=param.why or "")
            dropped.append(call.args[k])
        return dropped

    def _keywords(self, call: ast.Call, entry: Entry, site: Site, reentrant, skip=(), add=(),
                  add_missing: bool = True, drop=()) -> None:
        """Apply each keyword's mapping decision (keep / rename / set / drop) in place, then append the
        keywords in `add` and (with add_missing) the `set` ones the call lacks. `drop`: arguments already
        decided to go."""
        dropped = list(drop)
        for kw in call.keywords:
            if kw.arg in skip:
                continue
            if kw.arg is None:
                splat = next((p for p in entry.params if p.torch and p.torch.startswith("**")), None)
                if splat is not None and splat.code:   # torch's checkpoint takes its own keys from it
                    self.diag(site, splat.code, name=splat.torch, value=self.src.segment(kw.value),
                              why=splat.why or "")
                continue
            param = entry.param(kw.arg)
            if param is None:   # the function's own keyword argument: passed through on both sides
                self.diag(site, "RC116", name=kw.arg, value=self.src.segment(kw.value))
                continue
            action, code, new_value = self._decision(param, reentrant)
            code = self._context_code(param, kw.value, code)
            value = self.src.segment(kw.value)
            if action == "set":
                if value == new_value:
                    continue
                self.src.replace_node(kw.value, new_value)
            elif action == "rename":
                start = self.src.start(kw)
                self.src.replace(start, start + len(kw.arg), param.mindspore)
            elif action == "drop":
                dropped.append(kw)
            if code:
                self.diag(site, code, name=kw.arg, value=value, why=param.why or "")
        added = list(add)
        present = {kw.arg for kw in call.keywords}
        for param in entry.params if add_missing else ():
            action, code, new_value = self._decision(param, reentrant)
            if action == "set" and param.torch not in present:
                added.append(f"{param.mindspore}={new_value}")
                self.diag(site, code, name=param.mindspore, value=new_value, why=param.why or "")
        remove_arguments(self.src, call, dropped)
        if added and (splat := edits.append_keywords(self.src, call, added, dropped)) is not None:
            caveat = (f"; if it holds {self.reentrant_kw}=True, the block must be a Cell"
                      if any(text.startswith(f"{self.reentrant_kw}=") for text in added) else "")
            self.diag(site, "RC119", keywords=", ".join(added), value=self.src.segment(splat.value), caveat=caveat)

    def _context_code(self, param: Param, value: ast.AST, code: str | None) -> str | None:
        """A context_fn made of torch's selective-checkpointing names, which become recompat's (RC145), holds on
        MindSpore: RC148 instead of the partial note."""
        if param.role == "context" and any(id(n) in self.selective_nodes for n in ast.walk(value)):
            return "RC148"
        return code

    @staticmethod
    def _decision(param: Param, reentrant) -> tuple[str, str | None, str | None]:
        """(action, diagnostic code, value to set) for one parameter, given MindSpore's reentrancy."""
        override = {True: param.when_reentrant, False: param.when_non_reentrant,
                    "dynamic": param.when_dynamic}.get(reentrant)
        if override:
            return override["action"], override["code"], override.get("value")
        return param.action, param.code, None

    def _non_reentrant_settings(self) -> list[str]:
        """Keywords MindSpore's non-reentrant form always gets (from the checkpoint entry's params)."""
        return [f"{p.mindspore}={p.when_non_reentrant['value']}" for p in self.checkpoint.params
                if p.when_non_reentrant and p.when_non_reentrant["action"] == "set"]

    def _dropout_note(self, site: Site, reentrant_mark: bool = False) -> None:
        """RC150 where the recompute draws new dropout masks: every form, except a Cell marked with
        reentrant recompute() whose dropout is all Cells (nn.Dropout), not functions (ops.dropout). RC151 where
        the file draws random values itself: every form draws new ones (docs/behaviours.md)."""
        if self.uses_dropout and (not reentrant_mark or self._functional_dropout):
            self.diag(site, "RC150")
        if self._draws:
            self.diag(site, "RC151", apis=", ".join(self._draws))

    @functools.cached_property
    def _draws(self) -> list[str]:
        """The functions that draw random values (the entries with `draws`) that code a recomputed region may run
        calls, by torch's names: in the file's classes (a model's forward and what it builds), in a function a
        checkpoint call is given, and in the file's functions these call. A draw in main() or a training loop
        (the data, the initial weights) is outside every region."""
        drawing = self.m.drawing["torch"]
        scope = names.build_scope(self.tree, None)
        found = set()
        for body in _region_code(self.tree):
            for call in (n for n in ast.walk(body) if isinstance(n, ast.Call)):
                chain = names.attribute_chain(call.func)
                root = scope.qualname(chain[0]) if chain else None
                if root and (qual := ".".join([root, *chain[1:]])) in drawing:
                    found.add(qual)
        return sorted(found)

    @functools.cached_property
    def _functional_dropout(self) -> bool:
        """Does the file call a dropout function (not through self, where a dropout Cell is usual)?"""
        for node in ast.walk(self.tree):
            chain = names.attribute_chain(node.func) if isinstance(node, ast.Call) else None
            if chain and chain[-1] in self.m.functional_dropout and chain[0] != "self":
                return True
        return False

    def _mark(self, site: Site, options: list[str]) -> str:
        """`recompute(...)` marking a Cell with these options (the non-reentrant form gets the settings that
        the options do not give)."""
        if self.non_reentrant in options:
            given = {o.split("=", 1)[0] for o in options}
            options = [*options, *(s for s in self._non_reentrant_settings() if s.split("=", 1)[0] not in given)]
        self._dropout_note(site, reentrant_mark=self.non_reentrant not in options)
        return f"recompute({', '.join(o for o in options if o != self.reentrant)})"

    def _forwarded(self, site: Site, kw: ast.keyword, reentrant: bool, mark: Entry) -> str | None:
        """A keyword that a mark form passes on to torch's checkpoint, decided as the function form decides it, as
        a recompute() option; None when the mark (`mark`'s MindSpore API) cannot take it (dropped, with a
        diagnostic)."""
        param = self.checkpoint.param(kw.arg)
        value = self.src.segment(kw.value)
        note = functools.partial(self.diag, site)
        if param is None or param.role == "reentrancy":
            note("RC133", name=kw.arg, value=value, why="torch's checkpoint takes no such keyword here")
            return None
        action, code, new_value = self._decision(param, reentrant)
        code = self._context_code(param, kw.value, code)
        if action == "set":
            if value != new_value:
                note(code, name=param.mindspore, value=new_value, why=param.why or "")
            return f"{param.mindspore}={new_value}"
        if action in ("keep", "rename") and param.mindspore in _keywords_of(mark.mindspore["signature"]):
            if code:
                note(code, name=kw.arg, value=value, why=param.why or "")
            return f"{param.mindspore}={self.src.render_node(kw.value)}"   # with what inner rules rewrote in it
        if action == "drop" and code:
            note(code, name=kw.arg, value=value, why=param.why or "")
        else:
            note("RC133", name=kw.arg, value=value, why=f"Cell.recompute() takes no {param.mindspore}")
        return None

    def _default_impl(self, entry: Entry) -> list[str]:
        """The options of torch's default checkpoint_impl, as recompute() options."""
        impl = entry.role("implementation")
        return [f"{impl.mindspore}={impl.values[impl.torch_default]}"]

    # -- rules -----------------------------------------------------------------------------

    def _reentrancy(self, ev: Event, site: Site, call: ast.Call, is_cell, add: list, keyword: str | None,
                    override=None) -> object:
        """Decide MindSpore's use_reentrant for a recompute call; returns what MindSpore will use.
        A keyword the call needs is appended to `add`. `keyword`: the API's reentrancy keyword (None: it has
        none, and `override` is what it does)."""
        kw = next((k for k in call.keywords if keyword and k.arg == keyword), None)
        torch_value = override if kw is None and override is not None else (
            literal_flag(kw.value) if kw is not None else True)
        what = self.src.segment(call.args[0]) if call.args else "the callable"
        if torch_value == "dynamic" and is_cell is not False:   # a known non-Cell: False whatever it is
            if is_cell is None:
                self.diag(site, "RC103", value=self.src.segment(kw.value) if kw else "?", callable=what)
            return "dynamic"
        if torch_value is False:
            return False
        # torch reentrant (explicit True, None, or left out)
        if is_cell is True:
            if kw is None:
                if override is None:
                    self.diag(site, "RC104")
            elif isinstance(kw.value, ast.Constant) and kw.value.value is None:
                self.src.replace_node(kw.value, "True")
            return True
        self.diag(site, "RC101", callable=what, what="not known to be a Cell" if is_cell is None else "not a Cell")
        if kw is None:
            add.append(self.non_reentrant)
        else:
            self.src.replace_node(kw.value, "False")
        return False

    @RULES.register("recompute_call")
    def _recompute_call(self, ev: Event, cell_style: dict) -> None:
        call, entry = ev.node, ev.entry
        site = self.site(ev.node, entry.torch["api"])
        if not call.args or isinstance(call.args[0], ast.Starred):
            return self.manual(ev, site, "the function is not passed as the first positional argument")
        plan = cell_style.get(id(call))
        if plan is not None:
            return self._as_cell_call(ev, site, plan)
        dropped = self._positional_drops(call, entry, site)
        if isinstance(dropped, str):
            return self.manual(ev, site, dropped)
        block, is_cell = self._callable(ev, site, call.args[0])
        add = []
        role = entry.role("reentrancy")
        fixed = None if role.torch else literal_flag(ast.parse(role.torch_default, mode="eval").body)
        reentrant = self._reentrancy(ev, site, call, is_cell, add, role.torch, override=fixed)
        if fixed is False:   # an API that is always non-reentrant: nothing on the call says so
            add.append(self.non_reentrant)
        self._keywords(call, entry, site, reentrant, skip=(role.torch,), add=add, drop=dropped)
        target = self.ms_name("recompute")
        self.src.replace_node(call.func, target)
        self.diag(site, "RC100", source=entry.torch["api"], target=target)
        self._dropout_note(site)
        if (self.style == "cell" and is_cell is not False and isinstance(block, ast.Attribute)
                and id(call) in cell_style.get("why", {})):
            self.diag(site, "RC141", attr=self.src.segment(block), why=cell_style["why"][id(call)])

    def _partial(self, ev: Event) -> None:
        call, entry = ev.node, ev.entry
        if entry.rule == "runtime_name":
            return self._runtime_name(ev, call.args[0])
        site = self.site(ev.node, entry.torch["api"])
        if entry is not self.checkpoint:
            return self.manual(ev, site, "functools.partial of it has no MindSpore form")
        kws = {k.arg: k for k in call.keywords}
        flag = kws.get(self.reentrant_kw)
        reentrant = literal_flag(flag.value) if flag is not None else True
        if flag is not None and isinstance(flag.value, ast.Constant) and flag.value.value is None:
            self.src.replace_node(flag.value, "True")
        self._keywords(call, entry, site, reentrant, skip=(self.reentrant_kw,))
        target = self.ms_name("recompute")
        self.src.replace_node(call.args[0], target)
        # GRAPH mode cannot call a functools.partial object in construct: a function the file gets instead
        helper = _defined_name(entry.partial_support_code)
        if helper in self._module_scope(ev.scope).kinds and not self._has_support(helper):
            partial = f"functools.partial({target}, ...)"
            self.diag(site, "RC100", source=entry.torch["api"], target=partial)
            return self.diag(site, "RC123", helper=helper, partial=partial)
        self.src.replace_node(call.func, helper)
        self.support[helper] = entry.partial_support_code
        self.ms_used = True
        self.diag(site, "RC100", source=entry.torch["api"], target=f"{helper}({target}, ...)")
        self.diag(site, "RC122", helper=helper)

    def _holder_call(self, ev: Event, holder: Holder) -> None:
        call = ev.node
        site = self.site(ev.node, self.checkpoint.torch["api"])
        if isinstance(call.args[0], ast.Starred):
            return self.manual(ev, site, "the function is not passed as the first positional argument")
        _, is_cell = self._callable(ev, site, call.args[0])
        add = []
        reentrant = self._reentrancy(ev, site, call, is_cell, add, self.reentrant_kw, override=holder.reentrant)
        # The call's keywords override the partial's, so they are decided for the reentrancy the call
        # ends up with; the settings that reentrancy needs are in the partial already when it fixes the same.
        self._keywords(call, self.checkpoint, site, reentrant, skip=(self.reentrant_kw,), add=add,
                       add_missing=reentrant != holder.reentrant)
        self.diag(site, "RC100", source=f"{self.src.segment(call.func)} (holds torch's checkpoint)",
                  target=f"{self.src.segment(call.func)} (holds {self.ms}.recompute)")
        self._dropout_note(site)

    def _reference(self, ev: Event) -> None:
        if ev.entry.rule == "runtime_name":
            return self._runtime_name(ev, ev.node)
        site = self.site(ev.node, ev.entry.torch["api"])
        stmt = ev.stmt
        if (ev.entry is self.checkpoint and isinstance(stmt, ast.Assign) and stmt.value is ev.node):
            target = self.ms_name("recompute")
            self.src.replace_node(ev.node, target)
            return self.diag(site, "RC100", source=ev.entry.torch["api"], target=target)
        self.manual(ev, site, "it is used as a value, not called")

    @RULES.register("runtime_name")
    def _runtime_call(self, ev: Event, _plan) -> None:
        self._runtime_name(ev, ev.node.func)

    def _runtime_name(self, ev: Event, node: ast.AST) -> None:
        """A torch name recompat's runtime holds under the same contract (selective checkpointing): renamed."""
        entry = ev.entry
        site = self.site(node, entry.torch["api"])
        self.src.replace_node(node, entry.mindspore["api"])
        self.runtime_used = True
        self.diag(site, "RC145", source=entry.torch["api"], target=entry.mindspore["api"])

    def _op_reference(self, ev: Event) -> None:
        """torch.ops.<ns>.<op>.<overload> read as a value: recompat's Op of that name (what a policy is shown for the
        MindSpore ops selective.yaml lists for it)."""
        op, torch_name = ev.op, ".".join(filter(None, (self.selective.runtime["torch_ops"], ev.op)))
        target = ".".join(filter(None, (self.selective.runtime["ops"], op)))
        site = self.site(ev.node, torch_name)
        self.src.replace_node(ev.node, target)
        self.runtime_used = True
        known, runs_as = self.selective.op(op), self.selective.composite.get(op)
        if op.count(".") < 2:       # the namespace, or a part of it: the ops it leads to are told where named
            self.diag(site, "RC145", source=torch_name, target=target)
        elif known is not None and known.mindspore:
            ms = ", ".join(w.op + (f" then {w.then}" if w.then else "") for w in known.mindspore)
            self.diag(site, "RC146", source=torch_name, target=target, why=f"a policy is shown MindSpore's {ms} as it")
        elif runs_as is not None:
            self.diag(site, "RC146", source=torch_name, target=target,
                      why=f"torch's dispatch never sees it (it runs as {', '.join(runs_as)}), nor does MindSpore's: "
                          "a policy naming it matches nothing on either side")
        else:
            why = known.unprobed if known is not None and known.unprobed else "mappings/selective.yaml lists none"
            self.diag(site, "RC147", source=torch_name, target=target, why=why)

    @RULES.register("recompute_sequential")
    def _recompute_sequential(self, ev: Event, _plan) -> None:
        call, entry = ev.node, ev.entry
        site = self.site(ev.node, entry.torch["api"])
        if len(call.args) < 3 and not call.keywords:
            return self.manual(ev, site, "expected checkpoint_sequential(functions, segments, input)")
        name = entry.mindspore["api"]
        module_scope = self._module_scope(ev.scope)
        if name in module_scope.kinds and not self._has_support(name):
            return self.manual(ev, site, f"this file already defines {name}")
        self._keywords(call, entry, site, reentrant=False)
        self.src.replace_node(call.func, name)
        self.support[name] = entry.support_code
        self.ms_used = True
        self.diag(site, "RC120", helper=name)
        self._dropout_note(site)

    @staticmethod
    def _module_scope(scope):
        while scope.parent is not None:
            scope = scope.parent
        return scope

    def _has_support(self, name: str) -> bool:
        return any(isinstance(s, ast.FunctionDef) and s.name == name
                   and "added by recompat" in (ast.get_docstring(s) or "") for s in self.tree.body)

    @RULES.register("mark_cell")
    def _mark_cell(self, ev: Event, _plan) -> None:
        """checkpoint_wrapper(m) / composable checkpoint(m) as a statement -> m.recompute()."""
        call, entry, stmt = ev.node, ev.entry, ev.stmt
        site = self.site(ev.node, entry.torch["api"])
        if not call.args:
            return self.manual(ev, site, "the module is not passed positionally")
        is_assign = isinstance(stmt, ast.Assign) and stmt.value is call and len(stmt.targets) == 1
        is_expr = isinstance(stmt, ast.Expr) and stmt.value is call and entry.form == "in_place"
        # `return wrapper(module, ...)` (torchtitan's _wrap_block): mark, then return the module itself
        is_return = (isinstance(stmt, ast.Return) and stmt.value is call
                     and names.attribute_chain(call.args[0]) is not None)
        if not (is_assign or is_expr or is_return):
            return self.manual(ev, site, "only `x = ...(module)` and `return ...(module)` statements (module a name "
                                         "or attribute) can become module.recompute()")
        module = self.src.render_node(call.args[0])
        options = self._wrapper_options(site, entry, call, call.args[1:])
        if isinstance(options, str):
            return self.manual(ev, site, options)
        indent = self.src.indent(stmt.lineno)
        mark = self._mark(site, options)
        if is_assign:
            target = self.src.render_node(stmt.targets[0])
            text = f"{target}.{mark}" if target == module else f"{target} = {module}\n{indent}{target}.{mark}"
        elif is_return:
            target = module
            text = f"{module}.{mark}\n{indent}return {module}"
        else:
            target = module
            text = f"{module}.{mark}"
        self.src.replace_node(stmt, text)
        code = "RC130" if entry.form == "wrapper" else "RC132"   # a wrapper's parameter names lose a prefix
        self.diag(site, code, source=entry.torch["api"].rsplit(".", 1)[1], module=target)

    def _wrapper_options(self, site: Site, entry: Entry, call: ast.Call, positional: list) -> list[str] | str:
        """The recompute() options that a checkpoint_wrapper / composable checkpoint call (or a functools.partial
        of one: `positional` are the arguments after the module) asks for; a str says why they cannot be told."""
        splat = next((kw for kw in call.keywords if kw.arg is None), None)
        if splat is not None:
            return f"**{self.src.segment(splat.value)} may hold options the mark must fix"
        impl = entry.role("implementation")
        chosen = next((kw.value for kw in call.keywords if impl and kw.arg == impl.torch), None)
        if impl and chosen is None and entry.position(impl) - 1 < len(positional):
            chosen = positional[entry.position(impl) - 1]
        if chosen is None:
            options = self._default_impl(entry) if impl else []
        else:
            value = self.src.segment(chosen)
            mapped = next((v for k, v in impl.values.items() if value.endswith(k)), None)
            if mapped is None:
                return f"{impl.torch}={value} is not a literal CheckpointImpl"
            options = [f"{impl.mindspore}={mapped}"]
            self.diag(site, impl.code, name=impl.torch, value=value, why=impl.why or "")
        reentrant = self.non_reentrant not in options
        for k, extra in enumerate(positional, start=1):
            param = next((p for p in entry.params if entry.position(p) == k), None)
            if param is None or param is not impl:
                self.diag(site, "RC133", name=param.torch if param else "argument", value=self.src.segment(extra),
                          why=param.why if param else "no MindSpore counterpart")
        forwarded = []
        for kw in call.keywords:
            param = entry.param(kw.arg)
            if param is None:    # into **checkpoint_fn_kwargs / **kwargs: torch's checkpoint gets it
                forwarded.append(kw)
            elif param is not impl:
                self.diag(site, "RC133", name=kw.arg, value=self.src.segment(kw.value), why=param.why or "")
        if not impl and any(kw.arg == self.context_kw for kw in forwarded):
            # torch's composable form is always non-reentrant; the plain mark keeps dropout masks (RC150), so it
            # is used unless context_fn is given, which MindSpore's reentrant form ignores
            options, reentrant = [self.non_reentrant], False
        return options + [o for kw in forwarded if (o := self._forwarded(site, kw, reentrant, entry)) is not None]

    @staticmethod
    def _argument(call: ast.Call, entry: Entry, param) -> ast.AST | None:
        """The value passed for `param`: positionally where its recorded signature puts it, or by keyword."""
        k = entry.position(param)
        if k is not None and k < len(call.args):
            return call.args[k]
        return next((kw.value for kw in call.keywords if kw.arg == param.torch), None)

    def _wrapper_fn_options(self, ev: Event, site: Site, wrapper: Entry, given, partial) -> list[str] | str:
        """The recompute() options for the cells apply_activation_checkpointing wraps with `given` (its
        checkpoint_wrapper_fn): the wrapper itself or a functools.partial of it, written there or bound to a name;
        anything else is dropped with a note, and the cells are marked as torch's default wrapper would wrap them
        (so a later checkpoint_wrapper on the same Cell agrees: MindSpore refuses to switch reentrancy).
        `partial`: `given` as (functools.partial call, its wrapper entry), when it is one. A str says why the
        options cannot be told."""
        default = self._default_impl(wrapper)
        if given is None or self.qualname(given, ev.scope) in wrapper.torch_names:
            return default
        if partial is None:
            param = ev.entry.role("wrapper_fn")
            self.diag(site, "RC133", name=param.torch, value=self.src.segment(given), why=param.why or "")
            return default
        call, partial_of = partial
        if len(call.args) > 1:
            return f"{self.src.segment(given)} binds positional arguments of {self.src.segment(call.args[0])}"
        return self._wrapper_options(site, partial_of, call, [])

    def wrapper_fn_partial(self, node, scope: names.Scope) -> tuple[ast.Call, Entry] | None:
        """(the call, the wrapper's entry) when `node` is functools.partial(checkpoint_wrapper, ...) or a name
        bound to one."""
        if isinstance(node, ast.Name):
            return self.wrapper_partials.get(node.id)
        entry = self.wrapper_partial(node, scope)
        return (node, entry) if entry is not None else None

    @RULES.register("mark_tree")
    def _mark_tree(self, ev: Event, _plan) -> None:
        """apply_activation_checkpointing(model, check_fn=f) -> mark every matching sub-Cell."""
        call, entry, stmt = ev.node, ev.entry, ev.stmt
        site = self.site(ev.node, entry.torch["api"])
        if not (isinstance(stmt, ast.Expr) and stmt.value is call):
            return self.manual(ev, site, "its result is used; only a statement call can be rewritten")
        module, check_fn, wrapper_fn = (entry.role(r) for r in ("module", "filter", "wrapper_fn"))
        model = self._argument(call, entry, module)
        if model is None or names.attribute_chain(model) is None:
            return self.manual(ev, site, "the model is not a plain name or attribute")
        check = self._argument(call, entry, check_fn)
        policy = entry.role("wrap_policy")
        splat = next((kw for kw in call.keywords if kw.arg is None), None)
        if splat is not None:
            return self.manual(ev, site, f"**{self.src.segment(splat.value)} may hold {check_fn.torch} or "
                                         f"{policy.torch}, filters that a loop written here cannot see")
        chosen = self._argument(call, entry, policy)
        if chosen is not None and not (isinstance(chosen, ast.Constant) and chosen.value is None):
            return self.manual(ev, site, f"{policy.torch}={self.src.segment(chosen)} chooses the modules, "
                                         f"and it has no MindSpore counterpart: express the choice as {check_fn.torch}")
        decided = (module, check_fn, wrapper_fn, policy)   # a policy here is None (dropped: torch's default)
        for k, arg in enumerate(call.args):   # anything else: no counterpart
            if k not in (entry.position(p) for p in decided):
                param = next((p for p in entry.params if entry.position(p) == k), None)
                self.diag(site, "RC133", name=param.torch if param else "argument", value=self.src.segment(arg),
                          why=param.why if param else "no MindSpore counterpart")
        wrapper = self.m.entry(wrapper_fn.torch_default)
        given = self._argument(call, entry, wrapper_fn)
        partial = self.wrapper_fn_partial(given, ev.scope) if given is not None else None
        options = self._wrapper_fn_options(ev, site, wrapper, given, partial)
        if isinstance(options, str):
            return self.manual(ev, site, options)
        for kw in call.keywords:
            if kw.arg not in (p.torch for p in decided):
                param = entry.param(kw.arg)
                self.diag(site, "RC133", name=kw.arg, value=self.src.segment(kw.value),
                          why=param.why if param else "no MindSpore counterpart")
        m = self.src.render_node(model)
        condition = f"cell is not {m}"
        if check is not None:
            check_text = self.src.render_node(check)
            if names.attribute_chain(check) is None:
                check_text = f"({check_text})"
            condition += f" and {check_text}(cell)"
        indent = self.src.indent(stmt.lineno)
        mark = self._mark(site, options)
        text = (f"for _, cell in {m}.cells_and_names():\n"
                f"{indent}    if {condition}:\n"
                f"{indent}        cell.{mark}")
        self.src.replace_node(stmt, text)
        self.diag(site, "RC131", model=m, mark=mark, filter=f" that {check_fn.torch} accepts" if check else "",
                  wrapper=self.src.segment(given) if partial else f"torch's default {wrapper_fn.torch} (non-reentrant)")

    # -- --style cell ------------------------------------------------------------------------

    def _cell_style_plan(self) -> dict:
        """Which checkpoint calls become plain calls of a Cell marked in __init__.

        A `self.attr` qualifies when every use of it in its class is as the block of a
        checkpoint call, it is assigned once, in __init__, and the calls agree on the options."""
        plan: dict = {"why": {}}
        by_attr = defaultdict(list)
        for ev in self.events:
            if ev.kind == "call" and ev.entry is self.checkpoint and ev.cls is not None and ev.node.args:
                block = ev.node.args[0]
                if isinstance(block, ast.Attribute) and block.attr in ("__call__", "forward"):
                    block = block.value
                if isinstance(block, ast.Attribute) and isinstance(block.value, ast.Name) and block.value.id == "self":
                    by_attr[(id(ev.cls), block.attr)].append(ev)
        for (_, attr), evs in by_attr.items():
            why, flag = self._cell_style_blocker(evs[0].cls, attr, evs)
            if why:
                plan["why"].update({id(ev.node): why for ev in evs})
                continue
            assign = self._mark_after(evs[0].cls, attr, self._init_assignment(evs[0].cls, attr), evs[0].node, flag)
            if isinstance(assign, str):
                plan["why"].update({id(ev.node): assign for ev in evs})
                continue
            for ev in evs:
                plan[id(ev.node)] = {"attr": attr, "assign": assign, "first": ev is evs[0],
                                     "flag": flag and flag[0]}
        return plan

    def _cell_style_blocker(self, cls: ast.ClassDef, attr: str,
                            evs: list[Event]) -> tuple[str | None, tuple | None]:
        """(why `self.attr` is not marked in __init__, or None; where its calls are checkpointed under a flag,
        `if self.F: checkpoint(self.attr, ...) else: self.attr(...)`, (F, the statement that sets it))."""
        assign = self._init_assignment(cls, attr)
        # a container called as a block is a Sequential (a ModuleList or ModuleDict is not callable)
        kind = names.class_attrs(cls, tree_index.index(self.tree)).get(attr)
        if kind not in (names.CELL, names.CONTAINER) and not (
                assign is not None and self._module_parameter(cls, assign.value)):
            return f"self.{attr} is not assigned a Cell in this class", None
        if assign is None:
            return f"self.{attr} is not assigned exactly once, in __init__", None
        uses = [n for n in ast.walk(cls) if names.is_self_attr(n) and n.attr == attr and isinstance(n.ctx, ast.Load)]
        flag = None
        if len(uses) != len(evs):
            flag = self._flag_of(cls, attr, evs, uses)
            if isinstance(flag, str):
                return flag, None
        options = {self._mark_options(ev.node) for ev in evs}
        if len(options) != 1 or None in options:
            return "its checkpoint calls use options recompute() cannot express, or differ between calls", None
        return None, flag

    def _mark_after(self, cls: ast.ClassDef, attr: str, assign: ast.stmt, call: ast.Call,
                    flag: tuple | None) -> ast.stmt | str:
        """The statement of __init__ the mark goes after: the block's assignment (`assign`), or, where the mark also
        reads the flag or attributes in its options (`context_fn=self.context_fn`), the last of their assignments,
        each set once in __init__'s own body. Else why not (a string)."""
        read = {n.attr for kw in call.keywords if kw.arg and self.checkpoint.param(kw.arg) is not None
                for n in ast.walk(kw.value) if names.is_self_attr(n) and isinstance(n.ctx, ast.Load)}
        needed = {attr: assign, **({flag[0]: flag[1]} if flag else {}),
                  **{a: self._init_assignment(cls, a) for a in sorted(read - {attr})}}
        if len(needed) == 1:
            return assign
        init = _init_of(cls)
        unset = [a for a, stmt in needed.items() if stmt is None or not any(s is stmt for s in init.body)]
        if unset:
            return (f"the mark would read {', '.join(f'self.{a}' for a in unset)}, which __init__'s own body does not "
                    f"set exactly once")
        return max(needed.values(), key=lambda stmt: stmt.end_lineno)

    def _flag_of(self, cls: ast.ClassDef, attr: str, evs: list[Event], uses: list) -> tuple | str:
        """(F, the statement that sets it) for the flag `self.F` under which every checkpoint call of `self.attr`
        stands (each the statement of an `if self.F:` whose `else` holds the other uses), set once, in __init__'s
        own body, and stored nowhere else in the file: the flag's value when the model is built then decides the
        mark. Else why not (a string)."""
        outside = f"self.{attr} is also used outside checkpoint"
        init = _init_of(cls)
        branches = [next((n for n in ast.walk(cls) if isinstance(n, ast.If) and any(s is ev.stmt for s in n.body)),
                         None) for ev in evs]
        tests = {names.is_self_attr(b.test) and b.test.attr for b in branches if b is not None}
        if None in branches or len(tests) != 1 or False in tests:
            return outside
        flag = tests.pop()
        in_else = {id(n) for b in branches for stmt in b.orelse for n in ast.walk(stmt)}
        called = {id(n) for ev in evs for n in ast.walk(ev.node)}
        if any(id(n) not in called and id(n) not in in_else for n in uses):
            return outside
        flag_assign = self._init_assignment(cls, flag)
        stores = [n for n in tree_index.index(self.tree).of(ast.Attribute)
                  if n.attr == flag and not isinstance(n.ctx, ast.Load)]
        if flag_assign is None or len(stores) != 1 or not any(s is flag_assign for s in init.body):
            return (f"{outside}, and the flag self.{flag} it is checkpointed under is not set exactly once, in "
                    f"__init__'s own body (it could change after the model is built)")
        return flag, flag_assign

    def _module_parameter(self, cls: ast.ClassDef, value: ast.AST) -> bool:
        """Whether `value` is a parameter of __init__ annotated as torch's Module or a layer class
        (`def __init__(self, module: nn.Module)`, MONAI's ActivationCheckpointWrapper)."""
        init = _init_of(cls)
        param = next((a for a in init.args.posonlyargs + init.args.args + init.args.kwonlyargs
                      if isinstance(value, ast.Name) and a.arg == value.id), None)
        chain = names.attribute_chain(param.annotation) if param is not None and param.annotation else None
        head = chain and self.module_scope.qualname(chain[0])
        return bool(head) and self.m.frameworks["torch"].is_model_class(".".join([head, *chain[1:]]))

    @staticmethod
    def _init_assignment(cls: ast.ClassDef, attr: str) -> ast.Assign | ast.AnnAssign | None:
        """The one statement that assigns `self.attr` in the class, if it is in __init__ (`self.encoder = ...`,
        `self.encoder: nn.Module = ...`)."""
        found = [n for n in ast.walk(cls) if isinstance(n, (ast.Assign, ast.AnnAssign, ast.AugAssign))
                 and any(names.is_self_attr(t) and t.attr == attr
                         for t in (n.targets if isinstance(n, ast.Assign) else [n.target]))]
        init = _init_of(cls)
        if len(found) != 1 or init is None or isinstance(found[0], ast.AugAssign) or found[0].value is None:
            return None
        return found[0] if any(n is found[0] for n in ast.walk(init)) else None

    def _mark_options(self, call: ast.Call, text=None) -> str | None:
        """recompute(...) options for a checkpoint call, or None when they cannot be expressed; `text` gives a
        keyword value's code (default: as written)."""
        text = text or self.src.segment
        opts = []
        for kw in call.keywords:
            if kw.arg == self.reentrant_kw:
                if literal_flag(kw.value) == "dynamic":
                    return None
                if literal_flag(kw.value) is False:
                    opts += [self.non_reentrant, *self._non_reentrant_settings()]
            elif kw.arg == self.context_kw:
                opts.append(f"{kw.arg}={text(kw.value)}")
            elif kw.arg == self.rng_kw:
                if not (isinstance(kw.value, ast.Constant) and kw.value.value is True):
                    return None  # Cell.recompute cannot switch the RNG state off
            elif kw.arg is None or self.checkpoint.param(kw.arg) is None:
                continue         # the block's own inputs stay on the call
            # determinism_check / debug: dropped with a diagnostic
        return ", ".join(opts)

    def _as_cell_call(self, ev: Event, site: Site, plan: dict) -> None:
        call = ev.node
        block = call.args[0]
        if isinstance(block, ast.Attribute) and block.attr in ("__call__", "forward"):
            block = block.value
        keep = [self.src.render_node(a) for a in call.args[1:]]
        absorbed, caveats, rendered = [], [], {}
        for kw in call.keywords:
            param = self.checkpoint.param(kw.arg) if kw.arg else None
            if kw.arg is None or param is None:
                keep.append(self.src.render_node(kw))
            elif param.action == "drop":
                self.diag(site, param.code, name=kw.arg, value=self.src.segment(kw.value), why=param.why or "")
            else:   # expressed by the mark in __init__: named in RC140 (nothing goes silently)
                rendered[id(kw.value)] = self.src.render_node(kw.value)   # with what inner rules rewrote in it
                absorbed.append(f"{kw.arg}={self.src.segment(kw.value)}")
                code = self._context_code(param, kw.value, param.code) if param.action == "keep" else None
                if code:
                    caveats.append((code, kw))   # what still holds in the mark (context_fn: RC115 or RC148)
        self.src.replace_node(call, f"{self.src.render_node(block)}({', '.join(keep)})")
        attr = f"self.{plan['attr']}"
        options = self._mark_options(call, lambda node: rendered[id(node)])
        mark = f"{attr}.recompute({options})"
        if plan["first"]:
            assign = plan["assign"]
            end = self.src.line_end(assign.end_lineno)
            line = self.src.text[self.src.line_start(assign.end_lineno):end]
            at = self.src.line_start(assign.end_lineno) + len(line.rstrip("\r\n"))
            indent = self.src.indent(assign.lineno)
            guard = f"if self.{plan['flag']}:\n{indent}    " if plan["flag"] else ""
            self.src.insert(at, f"\n{indent}{guard}{mark}")
        if plan["flag"]:
            self.diag(site, "RC142", attr=attr, mark=mark, flag=f"self.{plan['flag']}",
                      absorbed=", ".join(absorbed) or "none")
        else:
            self.diag(site, "RC140", attr=attr, mark=mark, absorbed=", ".join(absorbed) or "none")
        for code, kw in caveats:
            self.diag(site, code, name=kw.arg, value=self.src.segment(kw.value), why="")
        self._dropout_note(site, reentrant_mark=self.non_reentrant not in options)


def _init_of(cls: ast.ClassDef) -> ast.FunctionDef | None:
    """The class's own __init__, if it defines one."""
    return next((f for f in cls.body if isinstance(f, ast.FunctionDef) and f.name == "__init__"), None)


# -- stage 2: imports and support code -------------------------------------------------------

def settle_imports(src: Source, tree: ast.Module, mappings: Mappings, ms_alias: str, needs_ms: bool,
                   support: dict[str, str], api_roots: set = frozenset(), needs_runtime: bool = False) -> None:
    """Remove the imports of torch's checkpoint APIs, and the one each API use went through (`api_roots`: `import
    torch as th` for `th.utils.checkpoint.checkpoint`, when no other import binds `th`), that nothing uses any more;
    add `import mindspore`, `import <recompat's runtime>` (`needs_runtime`) and support code. A user's own unused
    import stays."""
    apis = set(mappings.by_torch_name)
    bound = Counter(name for s in names.imports(tree)
                    for name, _, _ in names.import_bindings(s))
    edits.settle_imports(src, tree, modules=apis | {api.rsplit(".", 1)[0] for api in apis},
                         exact={qual for name, qual in api_roots if qual and bound[name] == 1},
                         additions=[("mindspore", None if ms_alias == "mindspore" else ms_alias)] * needs_ms
                         + [(mappings.selective.runtime["module"], None)] * needs_runtime)
    for name, code in support.items():
        if any(isinstance(s, ast.FunctionDef) and s.name == name for s in tree.body):
            continue
        code = code.replace("{ms}", ms_alias)
        at = _support_position(src, tree)
        rest = src.text[at:]
        blank_after = len(rest) - len(rest.lstrip("\r\n"))
        after = "" if at >= len(src.text) else "\n" * max(0, 2 - rest[:blank_after].count(src.newline))
        src.insert(at, "\n\n" + code + after)


@functools.lru_cache(maxsize=None)
def _defined_name(code: str) -> str:
    """The name of the function support code defines."""
    return next(s.name for s in ast.parse(code).body if isinstance(s, ast.FunctionDef))


def _support_position(src: Source, tree: ast.Module) -> int:
    """Support code goes after the imports: the start of the line after the last top-level import."""
    last = None
    for stmt in tree.body:
        if isinstance(stmt, (ast.Import, ast.ImportFrom)) or (
                isinstance(stmt, ast.Try) and all(isinstance(s, (ast.Import, ast.ImportFrom)) for s in stmt.body)):
            last = stmt
    return src.line_end(last.end_lineno) if last is not None else edits.after_imports(src, tree)


def _region_code(tree: ast.Module) -> list[ast.AST]:
    """What a recomputed region may run, as far as the file shows: its classes, the top-level functions passed to
    a call as an argument (checkpoint(fn, x)), and the top-level functions those call by name, transitively."""
    functions = {n.name: n for n in tree.body if isinstance(n, (ast.FunctionDef, ast.AsyncFunctionDef))}
    todo: list[ast.AST] = [n for n in tree.body if isinstance(n, ast.ClassDef)]
    for call in (n for n in ast.walk(tree) if isinstance(n, ast.Call)):
        todo += [functions[a.id] for a in call.args if isinstance(a, ast.Name) and a.id in functions]
    seen: dict[int, ast.AST] = {}
    while todo:
        node = todo.pop()
        if id(node) in seen:
            continue
        seen[id(node)] = node
        for call in (n for n in ast.walk(node) if isinstance(n, ast.Call)):
            if isinstance(call.func, ast.Name) and call.func.id in functions:
                todo.append(functions[call.func.id])
    return list(seen.values())

