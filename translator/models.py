"""Whole model files (translate --scope model): the core API set of mappings/ (rules api_class, api_function,
api_value, tensor_method, tensor_attribute, method_name, model_method) and the training pairs (optimizer, loss,
lr_schedule, grad_clip: called as classes and functions are), either way, one mechanism driven by the entries.
The source's compiler markers (markers.yaml) are replaced by what they give in eager execution; MindSpore's
value_and_grad steps become torch's loop (translator/steps_to_torch.py).

Runs after the checkpoint pass, on its output. Every use of the source framework is a site: converted,
partial, or manual (left as it is, the file still valid Python). Target names are written as placeholders
while walking and spelled at the end (`nn.Dense`, or `mindspore.nn.Dense` where `nn` stays taken by source
code left as it is), then imports are settled: source imports nothing uses go, the target's are added.
"""
from __future__ import annotations

import ast
import functools
import re
from dataclasses import dataclass, field, replace

from recompat.constants import OTHER
from recompat.mappings import MODEL_RULES, TENSOR_FORMS, Entry, Mappings, signature_arguments
from recompat.translator import convert, edits, names, steps, steps_to_torch, tree_index
from recompat.translator.results import Site
from recompat.translator.rules import Rules
from recompat.translator.sites import SiteLog
from recompat.translator.source import Source

# The rules of mappings.MODEL_RULES, by kind of use: a call of the API, a reference to it (a base class, an
# annotation), a method call `x.name(...)` (True when the handler took it), a def of a model's method, an attribute
# read from a tensor (`x.shape`).
RULES = Rules("the core API set (--scope model)")

_PLACEHOLDER = re.compile(r"\x00([A-Za-z_][\w.]*)\x00")
RUNTIME_MODULE = "recompat.runtime"      # what translated code imports from recompat
# what translated code calls where a MindSpore class is passed around as a value (recompat/runtime.py)
RUNTIME_ADAPTER = "torch_signature"
# what translated code calls for torch's in-place initialisers (form: initializer; recompat/runtime.py)
RUNTIME_INITIALIZED = "initialized"
# ... for a layer tensor that layers narrowed by isinstance hold at different places (recompat/runtime.py)
RUNTIME_LAYER_TENSOR = "layer_tensor"
# ... for torch's in-place tensor methods, computed out of place and written back (form: assigned)
RUNTIME_ASSIGN = "assign"
_FLOAT_FORMATS = frozenset("eEfFgG%")     # a format spec's types that format a number as a float
_LITERAL_RECEIVERS = (ast.Constant, ast.JoinedStr, ast.List, ast.Dict, ast.Set, ast.Tuple, ast.ListComp)


def _keyed_members(arg: ast.AST) -> list[tuple[str, ast.AST]]:
    """(key, value) of a dict a container by key is given: `dict(k=v, ...)` or `{"k": v, ...}`; [] for anything
    else (a name, a comprehension: known only when it runs)."""
    if isinstance(arg, ast.Call) and isinstance(arg.func, ast.Name) and arg.func.id == "dict" and not arg.args:
        return [(k.arg, k.value) for k in arg.keywords if k.arg is not None]
    if isinstance(arg, ast.Dict):
        return [(k.value, v) for k, v in zip(arg.keys, arg.values)
                if isinstance(k, ast.Constant) and isinstance(k.value, str) and k.value.isidentifier()]
    return []


def target(qual: str) -> str:
    """A target name, spelled later (see ModelTranslator.spell)."""
    return f"\x00{qual}\x00"


def runtime(name: str) -> str:
    """A function or class of recompat.runtime, spelled later (bare, or qualified where the file binds its name)."""
    return target(f"{RUNTIME_MODULE}.{name}")


@functools.lru_cache(maxsize=None)
def signature(text: str) -> tuple[list[str], str | None, list[str], str | None] | None:
    """(positional names, *name, keyword-only names, **name) of a recorded signature; None when unparsable."""
    a = signature_arguments(text)
    if a is None:
        return None
    positional = [x.arg for x in a.posonlyargs + a.args if x.arg != "self"]
    return (positional, a.vararg.arg if a.vararg else None, [x.arg for x in a.kwonlyargs],
            a.kwarg.arg if a.kwarg else None)


@dataclass
class _Arg:
    name: str            # the source parameter it binds
    node: ast.AST        # the argument node (an expression, or an ast.keyword)
    index: int | None    # position among the positional arguments; None for a keyword

    @property
    def value(self) -> ast.AST:
        return self.node.value if isinstance(self.node, ast.keyword) else self.node


class _Manual(Exception):
    def __init__(self, code: str, deferred: bool = False, **fields):
        super().__init__(code)
        self.code, self.fields = code, fields
        self.deferred = deferred  # a value only the running program knows decides the call (convert.Deferred)


@dataclass(frozen=True)
class _Tables:
    """What the walk looks names up in, for one direction of one set of mappings (built once, not per file)."""
    by_attr: dict[str, list[Entry]]    # entries used as `x.<name>`, by name: a model's method and a tensor method
    attributes: dict[str, Entry]       # tensor attributes with an entry; any other of the Tensor class's is manual
    skip: set[str]                     # the checkpoint family: its sites are the checkpoint pass's
    markers: dict                      # the source's compiler markers (markers.yaml), replaced by their eager value
    moved_tensors: set[str]            # layer tensors some MindSpore counterpart holds under another name
    moved_attributes: set[str]         # ... and the other attributes it keeps under another name, or not at all


@functools.lru_cache(maxsize=None)
def _tables(mappings: Mappings, frm: str) -> _Tables:
    table = mappings.model_scope[frm]
    by_attr: dict[str, list[Entry]] = {}
    for e in {id(e): e for e in table.values()}.values():
        if RULES.handler(e.rule, "method_call") or RULES.handler(e.rule, "def"):
            for name in dict.fromkeys(n.rsplit(".", 1)[1] for n in e.names(frm)):   # aliases too
                by_attr.setdefault(name, []).append(e)
    moved_tensors, moved_attributes = set(), set()
    if frm == "torch":
        moved_tensors = {t.torch for e in mappings.layer_pairs for t in e.tensors if t.torch and t.mindspore != t.torch}
        moved_attributes = moved_tensors | {t.torch for e in mappings.layer_pairs for t in e.attributes
                                            if t.mindspore != t.torch}
    return _Tables(
        by_attr=by_attr,
        attributes={e.names(frm)[0].rsplit(".", 1)[1]: e for e in table.values() if RULES.handler(e.rule, "attribute")},
        skip={n for e in mappings.entries if e.rule not in MODEL_RULES for n in e.names(frm)},
        markers={mk.api: mk for mk in mappings.markers if mk.framework == frm},
        moved_tensors=moved_tensors, moved_attributes=moved_attributes)


class ModelTranslator(SiteLog, names.ScopedWalker):
    def __init__(self, src: Source, tree: ast.Module, mappings: Mappings, to: str,
                 models: frozenset[str] = frozenset()):
        super().__init__()
        self.src, self.tree, self.m, self.to = src, tree, mappings, to
        self.models = models   # model classes of other files of the tree, by qualified name (translator/project.py)
        self.frm = OTHER[to]
        self.table = mappings.model_scope[self.frm]
        self.framework = mappings.frameworks[self.frm]
        tables = _tables(mappings, self.frm)
        self.by_attr, self.attributes, self.skip = tables.by_attr, tables.attributes, tables.skip
        self.sites: list[Site] = []
        self._kept: list[tuple[int, str]] = []  # (where, name): a source-framework name code left as it is reads
        self.targets: set[str] = set()         # qualified target names written
        self.model_classes: set[str] = set()
        self.runtime_names: set[str] = set()   # the functions of recompat.runtime the output calls
        self._seen: set[int] = set()
        self._site_start: dict[int, int] = {}   # id(site) -> where its node starts in the text walked
        self.markers = tables.markers
        self._removed: set[int] = set()        # nodes the translation removed whole: not walked
        self._narrowed: dict[str, tuple[str, tuple[Entry, ...] | None]] = {}   # name -> (its classes, entries)
        self._layers_by_class: dict[int, dict] = {}   # id(class) -> {X: (classes, entries)} of its self.X layers
        self._layer_bases: dict[int, tuple] = {}      # id(class) -> _layer_base's answer
        self._moved_tensors, self._moved_attributes = tables.moved_tensors, tables.moved_attributes
        self.steps = steps.Steps()                    # the training steps of the file (translator/steps.py)
        self._pending_steps: list[steps.Step] = []    # those whose function the translation makes

    def site(self, node: ast.AST, api: str) -> Site:
        site = super().site(node, api)
        self._site_start[id(site)] = self.src.start(node)
        return site

    def withdraw(self, removed: list[ast.AST], keep: list[ast.AST] = ()) -> None:
        """Code the translation removes (a dropped argument) is not a site any more, nor does it read names: what
        was found inside it goes, but for what was found inside ``keep`` (parts of it the translation keeps)."""
        spans = [(self.src.start(n), self.src.end(n)) for n in removed]
        kept = [(self.src.start(n), self.src.end(n)) for n in keep]

        def gone(at: int) -> bool:
            return any(a <= at < b for a, b in spans) and not any(a <= at < b for a, b in kept)
        self.sites = [s for s in self.sites if not gone(self._site_start.get(id(s), -1))]
        self._kept = [(at, name) for at, name in self._kept if not gone(at)]

    def keep(self, node: ast.AST, root: str | None) -> None:
        """`root`, the name `node` reads the source framework through, is still read where the translation leaves
        `node` as it is: its import stays."""
        if root:
            self._kept.append((self.src.start(node), root))

    @property
    def kept_roots(self) -> set[str]:
        """The source-framework names code left as it is still reads (once the walk is done: not code removed)."""
        return {name for _, name in self._kept}

    # -- walking -----------------------------------------------------------------------------------

    def run(self) -> list[Site]:
        if self.to == "mindspore":
            self.steps = steps.find(self.tree, self.src, self._built_by)
        else:
            self._torch_loops()
        self.visit(self.tree)
        return self.sites

    def _module_qualname(self, node: ast.AST) -> str | None:
        """The public qualified name of a dotted reference by the module's imports."""
        chain = names.attribute_chain(node)
        q = self._module_scope.qualname(chain[0]) if chain else None
        return self.framework.public_name(".".join([q, *chain[1:]])) if q else None

    def _clip_entry(self, node: ast.AST) -> Entry | None:
        entry = self.table.get(self._module_qualname(node) or "")
        return entry if entry is not None and entry.rule == "grad_clip" else None

    def _torch_loops(self) -> None:
        """MindSpore's value_and_grad steps as torch's loop (translator/steps_to_torch.py): written now, their
        statements not walked (the calls' arguments are)."""
        differentiate = self.m.step_functions("differentiate")
        found = steps_to_torch.find(self.tree, self.src, self._module_qualname, set(differentiate),
                                    set(self.m.step_functions("order")), self._clip_entry)
        for fn in found:
            api = self._module_qualname(fn.call.func)
            loop = differentiate[api]
            if fn.refused:
                self._removed.add(id(fn.call))
                self.keep(fn.call.func, names.attribute_chain(fn.call.func)[0])
                self.diag(self.site(fn.call.func, loop.api), "RC348", name=fn.name, api=self.src.segment(fn.call.func),
                          why=fn.refused, instead=loop.instead["en"])
                continue
            clip = "torch.nn.utils.clip_grad_norm_"
            steps_to_torch.rewrite(self.src, fn, target(clip), self._clip_entry)
            self._removed.add(id(fn.statement))
            function = self.src.segment(fn.function)
            optimizers, value_only = [], 0
            for use in fn.calls:
                if use.step is None:
                    value_only += 1
                    continue
                self._removed.add(id(use.step))
                optimizers.append(self.src.segment(use.optimizer))
                for stmt, call in use.clips:
                    self._removed.add(id(stmt))
                    self.targets.add(clip)
                    self.diag(self.site(call.func, self._clip_entry(call.func).names("mindspore")[0]), "RC349",
                              api=self.src.segment(call.func), target=clip,
                              parameters=steps_to_torch.parameters(fn, self.src))
            calls = [f"{len(optimizers)} step(s) ({', '.join(dict.fromkeys(optimizers))}): the optimizer's "
                     f"zero_grad(), {function}(...), backward() of the loss, the optimizer's step() where it was "
                     f"called with the gradients"] if optimizers else []
            if value_only:
                calls.append(f"{value_only} call(s) whose gradients are never read: {function}(...) alone")
            self.diag(self.site(fn.call.func, loop.api), "RC347", name=fn.name, api=self.src.segment(fn.call.func),
                      function=function, weights=self.src.segment(fn.weights), calls="; ".join(calls))

    def finish_steps(self) -> None:
        """Make each training step's function (translator/steps.py), once every other edit is made: the edits
        inside the statements it takes are rendered into it. Called after the manual sites got their comments."""
        for step in self._pending_steps:
            steps.rewrite(self.src, step, runtime("backward"))

    def _built_by(self, call: ast.Call) -> str | None:
        """The rule of the entry `call` builds with (optimizer, lr_schedule, ...), by the module's imports;
        steps.GRAD_SCALER for a class whose step(optimizer) steps that optimizer."""
        qual = self._module_qualname(call.func)
        entry = self.table.get(qual) if qual else None
        if entry is None:
            return None
        return steps.GRAD_SCALER if entry.steps_optimizer else entry.rule

    @functools.cached_property
    def _module_scope(self) -> names.Scope:
        return names.build_scope(self.tree, None)

    def _loop_call(self, call: ast.Call, func: ast.Attribute, loop) -> bool:
        """`loss.backward()`, `optimizer.zero_grad()`, `optimizer.step()` on recompat.runtime's .grad (training.yaml's
        loop methods with a runtime); False where the call stays as it is and is reported."""
        if loop.runtime is None or self.to != "mindspore":
            return False
        if id(call) in self.steps.left:               # part of a step left whole (its backward() says why)
            return func.attr == "step"                # a step() is not reported, a zero_grad() is (RC311)
        api = self.src.segment(func)
        if func.attr == "backward":
            step = self.steps.steps.get(id(call))
            if step is None:
                self.diag(self.site(func, loop.api), "RC343", api=api, what=loop.what["en"], instead=loop.instead["en"],
                          why=self.steps.refused.get(id(call), "it is not a statement of its own"))
                return True
            self._pending_steps.append(step)
            self.targets.add(loop.runtime)
            self.diag(self.site(func, loop.api), "RC340", api=api, target=loop.runtime.rsplit(".", 1)[1],
                      function=step.function, weights=steps.weights(step), count=len(step.run))
            return True
        if func.attr == "step" and id(call) not in self.steps.optimizers:
            if id(call) in self.steps.unknown:
                self.diag(self.site(func, loop.api), "RC344", api=api, receiver=self.src.segment(func.value))
            return True                   # a schedule's step(): the same on MindSpore's
        receiver = self.src.render_node(func.value)
        opening = self.src.text.index("(", self.src.end(func))
        self.src.replace(self.src.start(func), opening + 1,
                         f"{target(loop.runtime)}({receiver}" + (", " if call.args or call.keywords else ""))
        self.targets.add(loop.runtime)
        self.diag(self.site(func, loop.api), "RC341", api=api, target=loop.runtime.rsplit(".", 1)[1],
                  receiver=receiver.replace("\x00", ""), what=loop.what["en"])
        return True

    def qualname(self, node: ast.AST) -> tuple[str | None, str | None]:
        """(qualified name, root binding) of a dotted reference to an import; a re-exported name
        (torch.nn.modules.activation.ReLU) as the name its entry has (torch.nn.ReLU)."""
        root = node
        while root.__class__ is ast.Attribute:
            root = root.value
        if root.__class__ is not ast.Name or self.scope is None:
            return None, None
        if root.id not in self._imported_names:   # most names read are locals: no scope to look through
            return None, root.id
        chain = names.attribute_chain(node)
        q = self.scope.qualname(chain[0])
        qual = ".".join([q, *chain[1:]]) if q else None
        if qual and (public := self.framework.public_name(qual)) in self.table:
            return public, chain[0]
        return qual, chain[0]

    def ours(self, qual: str | None) -> bool:
        return qual is not None and (qual == self.frm or qual.startswith(self.frm + "."))

    @functools.cached_property
    def _imported_names(self) -> frozenset[str]:
        """Every name an import of the file binds, in any scope: only these can have a qualified name."""
        return frozenset(name for stmt in names.imports(self.tree)
                         for name, _, _ in [*names.import_bindings(stmt), *names.star_bindings(stmt)])

    def visit_ClassDef(self, node):
        is_model = any(self._model_base(b) for b in node.bases)
        if is_model:
            self.model_classes.add(node.name)
            for stmt in node.body:
                if isinstance(stmt, (ast.FunctionDef, ast.AsyncFunctionDef)):
                    for entry in self.by_attr.get(stmt.name, ()):
                        if handler := RULES.handler(entry.rule, "def"):
                            handler(self, node, stmt, entry)
        self._drop_marker_decorators(node)
        for expr in [*node.decorator_list, *node.bases, *(k.value for k in node.keywords)]:
            self.visit(expr)
        outer = getattr(self, "_in_model", False)
        self._in_model = is_model
        super().visit_ClassDef(node)
        self._in_model = outer

    def _model_base(self, base: ast.AST) -> bool:
        if isinstance(base, ast.Name) and base.id in self.model_classes:
            return True
        qual, _ = self.qualname(base)
        return qual is not None and (qual in self.models or self.m.frameworks[self.frm].is_model_class(qual))

    @RULES.register("method_name", on="def")
    def _rename_def(self, cls: ast.ClassDef, fn: ast.FunctionDef, entry: Entry) -> None:
        new = entry.names(self.to)[0].rsplit(".", 1)[1]
        site = self.site(fn, entry.names(self.frm)[0])
        if not entry.proven:
            return self.diag(site, "RC302", api=site.api, id=entry.id)
        start = self.src.start(fn)
        m = re.compile(r"def\s+").match(self.src.text, start)
        at = (m.end() if m else self.src.text.index(fn.name, start))
        self.src.replace(at, at + len(fn.name), new)
        self.diag(site, "RC308", old=fn.name, new=new, cls=cls.name)

    # -- compiler markers (markers.yaml) ---------------------------------------------------------------

    def _function(self, node, attrs):
        self._drop_marker_decorators(node)
        super()._function(node, attrs)

    def _marker(self, node: ast.AST):
        return self.markers.get(self.qualname(node)[0]) if self.markers else None

    def _marker_site(self, node: ast.AST, marker, change: str) -> None:
        self.diag(self.site(node, marker.api), "RC312", api=marker.api, change=change, why=marker.why["en"])

    def _drop_marker_decorators(self, node) -> None:
        """@torch.jit.ignore, @torch.jit.unused(...), ...: the decorator's lines go; what it decorates stays."""
        for d in node.decorator_list:
            marker = self._marker(d.func if isinstance(d, ast.Call) else d)
            if marker is None or marker.becomes != "identity":
                continue
            self.src.replace(self.src.line_start(d.lineno), self.src.line_end(d.end_lineno), "")
            self._removed.add(id(d))
            self._marker_site(d, marker, "decorator removed")

    def _marker_call(self, call: ast.Call, marker) -> bool:
        """torch.jit.is_scripting() -> False; torch.jit.script(m) -> m (a statement of its own goes). False where
        the call has another shape than the marker's (it is then an API use like any other)."""
        if call.keywords or any(isinstance(a, ast.Starred) for a in call.args):
            return False
        if marker.becomes == "false" and not call.args:
            self.src.replace_node(call, "False")
            self._marker_site(call, marker, "replaced by False")
            return True
        if marker.becomes == "isinstance" and len(call.args) == 2 and not isinstance(call.args[1], ast.Subscript):
            for a in call.args:
                self.visit(a)
            self.src.replace_node(call.func, "isinstance")
            self._marker_site(call, marker, "replaced by isinstance")
            return True
        if marker.becomes != "identity" or len(call.args) <= marker.argument:
            return False
        kept = call.args[marker.argument]
        self.visit(kept)
        if isinstance(self.stmt, ast.Expr) and self.stmt.value is call:
            self.src.render_node(self.stmt)
            edits.delete_statement(self.src, self.tree, self.stmt)
            self.withdraw([self.stmt])
            self._marker_site(call, marker, "statement removed")
        else:
            self.src.replace_node(call, self.src.render_node(kept))
            self._marker_site(call, marker, "replaced by its argument")
        return True

    def visit_Subscript(self, node: ast.Subscript):
        """torch.jit.Final[int] -> int."""
        marker = self._marker(node.value)
        if marker is None or marker.becomes != "subscript":
            return self.generic_visit(node)
        self.visit(node.slice)
        self.src.replace_node(node, self.src.render_node(node.slice))
        self._marker_site(node, marker, "replaced by the type it wraps")

    # -- calls and references ------------------------------------------------------------------------

    def visit_Call(self, node: ast.Call):
        func = node.func
        if self._method_named(node):
            return self.generic_visit(node)
        qual, root = self.qualname(func)
        if (marker := self.markers.get(qual)) is not None and self._marker_call(node, marker):
            return
        if self.ours(qual):
            self._seen.add(id(func))      # a call, not a reference
        else:
            self.visit(func)
        for child in node.args:           # inner calls first: the outer call renders their edits
            self._argument(child)
        for k in node.keywords:
            self._argument(k.value)
        if self.ours(qual):
            entry = self.table.get(qual)
            handler = RULES.handler(entry.rule, "call") if entry else None
            if handler is None:
                return self._unknown(func, qual, root)
            return handler(self, node, entry, qual, root)
        if isinstance(func, ast.Attribute) and qual is None and (node.args or node.keywords) \
                and (entry := self._base_init(func)) is not None:
            return self._call(node, entry, entry.names(self.frm)[0], None, method=True, keep_callee=True)
        if isinstance(func, ast.Attribute) and qual is None:
            for entry in self.by_attr.get(func.attr, ()):
                handler = RULES.handler(entry.rule, "method_call")
                if handler and handler(self, node, entry):
                    return
            if self._self_or_super(func.value) and func.attr in self.framework.model_methods \
                    and func.attr not in self._own_methods:     # self.add_module(...): the framework's method
                return self._unknown(func, f"{self.framework.model_bases[0]}.{func.attr}", None)
            if (loop := self.m.loop_method(self.frm, func.attr)) is not None:   # loss.backward(): the loop changes
                if self._loop_call(node, func, loop):
                    return
                self.diag(self.site(func, loop.api), "RC311", api=self.src.segment(func), what=loop.what["en"],
                          instead=loop.instead["en"])
            elif func.attr in self.framework.tensor_methods and self._tensor_receiver(func.value):
                self._unmapped_tensor_method(func)

    def _unmapped_tensor_method(self, func: ast.Attribute) -> None:
        """A method of the source Tensor class with no entry, on what is taken for a tensor: never passed over. One
        the other Tensor lacks (x.detach(), x.cpu()) would fail there: left by hand (RC301). One it has under the
        same name may mean something else there (x.to(device)): left as it is, reported as not proven (RC320)."""
        api = f"{self.framework.tensor_class}.{func.attr}"
        if func.attr not in self.m.shared_tensor_methods:
            return self._unknown(func, api, None)
        self.diag(self.site(func, api), "RC320", api=api,
                  target=f"{self.m.frameworks[self.to].tensor_class}.{func.attr}")

    # -- third-party libraries' per-framework modules (libraries.yaml) -----------------------------------

    def visit_Import(self, node: ast.Import):
        for alias in node.names:
            if not self.m.library_pairs(self.frm, alias.name):
                continue
            bound = alias.asname or alias.name.split(".")[0]
            pair, missing = self._library_pair(alias.name, self._attributes_read(bound))
            site = self.site(alias, alias.name)
            if alias.asname is None and "." in alias.name:   # binds the root: einops.layers.torch.X reads on
                missing = [f"{alias.name} read through its root package {bound}"]
            if missing:
                self._library_manual(site, alias.name, missing)
                continue
            other = getattr(pair, self.to)
            self.src.replace_node(alias, f"{other} as {bound}")
            self.diag(site, "RC318", source=alias.name, target=other, how="import", what=pair.what["en"])

    def visit_ImportFrom(self, node: ast.ImportFrom):
        if node.level or node.module is None:
            return
        pair, missing = self._library_pair(node.module, {a.name for a in node.names})
        if pair is None and not missing:
            return
        site = self.site(node, node.module)
        if missing:
            return self._library_manual(site, node.module, missing)
        other = getattr(pair, self.to)
        dotted = r"\s*\.\s*".join(map(re.escape, node.module.split(".")))
        self.src.replace_node(node, re.sub(rf"^from\s+{dotted}", f"from {other}", self.src.segment(node), count=1))
        self.diag(site, "RC318", source=node.module, target=other, how="import", what=pair.what["en"])

    def _argument(self, node: ast.AST) -> None:
        if node.__class__ is ast.Constant:
            self._library_string(node)
        else:
            self.visit(node)

    def _library_string(self, node: ast.Constant) -> None:
        """A call's argument that is exactly a library module's name: a dynamic import of it."""
        if not isinstance(node.value, str):
            return
        pair, missing = self._library_pair(node.value, set())
        if pair is None:
            return
        other = getattr(pair, self.to)
        text = self.src.segment(node)
        if text[1:-1] != node.value:     # a prefix, escapes or triple quotes: not rewritten in place
            return
        self.src.replace_node(node, f"{text[0]}{other}{text[-1]}")
        self.diag(self.site(node, node.value), "RC318", source=node.value, target=other,
                  how="the module's name given to a call, a dynamic import", what=pair.what["en"])

    def _library_pair(self, module: str, used: set[str]):
        """(the libraries.yaml pair that stands for `module` with every name of `used`, the names no pair of it
        has); (None, []) when `module` is no library module of the source side."""
        pairs = self.m.library_pairs(self.frm, module)
        if not pairs:
            return None, []
        pair = next((lm for lm in pairs if used <= set(lm.names)), None)
        if pair is not None:
            return pair, []
        lacking = sorted(used - {n for lm in pairs for n in lm.names})
        return None, lacking or [f"{', '.join(sorted(used))} stand for names of different modules: import them "
                                 "in separate statements"]

    def _attributes_read(self, bound: str) -> set[str]:
        return {n.attr for n in tree_index.index(self.tree).of(ast.Attribute)
                if isinstance(n.value, ast.Name) and n.value.id == bound}

    def _library_manual(self, site: Site, module: str, missing: list[str]) -> None:
        others = dict.fromkeys(getattr(lm, self.to) for lm in self.m.library_pairs(self.frm, module))
        self.diag(site, "RC319", source=module, missing=", ".join(missing), target=" / ".join(others))

    # -- a name narrowed by isinstance --------------------------------------------------------------

    def visit_If(self, node: ast.If):
        """``if isinstance(m, nn.BatchNorm2d): ... m.weight``: in the branch, m is one of the named layer classes,
        so its parameters and buffers have the target's names (the entries' ``tensors``: weight -> gamma)."""
        self.visit(node.test)
        narrowed = self._isinstance_layers(node)
        outer = dict(self._narrowed)
        if narrowed:
            self._narrowed[narrowed[0]] = narrowed[1:]     # for the branch only
        for stmt in node.body:
            self.visit(stmt)
        self._narrowed = outer
        for stmt in node.orelse:
            self.visit(stmt)

    def _isinstance_layers(self, node: ast.If) -> tuple[str, str, tuple[Entry, ...] | None] | None:
        """(name, its classes in words, their entries, None for a class the code computes) when the test is
        isinstance(name, C), isinstance(name, (C, ...)) or several of those joined by `or`, of layer entries, and
        nothing in the branch binds name again (torch -> MindSpore)."""
        tests = node.test.values if isinstance(node.test, ast.BoolOp) and isinstance(node.test.op, ast.Or) \
            else [node.test]
        if self.frm != "torch" or not all(
                isinstance(t, ast.Call) and isinstance(t.func, ast.Name) and t.func.id == "isinstance"
                and len(t.args) == 2 and not t.keywords and isinstance(t.args[0], ast.Name) for t in tests):
            return None
        names = {t.args[0].id for t in tests}
        if len(names) != 1 or _binds(node.body, name := names.pop()):
            return None
        classes = [c for t in tests for c in (t.args[1].elts if isinstance(t.args[1], ast.Tuple) else [t.args[1]])]
        quals = [self.qualname(c)[0] for c in classes]
        entries = tuple(self.table.get(q or "") for q in quals)
        if any(e is not None and e.tensors is None for e in entries) or any(
                e is None and q is not None for e, q in zip(entries, quals)):
            return None          # a class that is no layer, or one of the framework's without an entry
        # None for the entries: a class the code computes (type(norm), a factory's): known when it runs
        return name, " or ".join(self.src.segment(c) for c in classes), None if None in entries else entries

    def _layer_of(self, receiver: ast.AST, attr: str | None = None) -> tuple[str, tuple[Entry, ...] | None] | None:
        """(the classes in words, their entries) a receiver is known to be: a name narrowed by isinstance; self.X
        where every assignment to self.X in the class makes a layer of an entry with tensors (self.bn =
        nn.BatchNorm2d(8)); `self` in a class deriving from such a layer, for an attribute `attr` the class does
        not set itself (LayerNorm2d's self.weight); None when not known."""
        if isinstance(receiver, ast.Name):
            if receiver.id == "self" and receiver.id not in self._narrowed and self.cls is not None \
                    and self.func is not None and attr is not None:
                base, own = self._layer_base(self.cls)
                return base if attr not in own else None
            return self._narrowed.get(receiver.id)
        if isinstance(receiver, ast.Attribute) and names.is_self_attr(receiver.value) and self.frm == "torch" \
                and self.cls is not None:     # self.X.key: a member of a container by key (ModuleDict)
            return self._self_layers(self.cls).get(f"{receiver.value.attr}.{receiver.attr}")
        if not (self.frm == "torch" and names.is_self_attr(receiver) and self.cls is not None):
            return None
        return self._self_layers(self.cls).get(receiver.attr)

    def _layer_base(self, cls: ast.ClassDef) -> tuple[tuple[str, tuple[Entry, ...]] | None, set[str]]:
        """The layer a class derives from (RC325), as _layer_of gives it, and the attributes the class sets itself
        (which are not the layer's); (None, nothing) for a class deriving from no layer."""
        if id(cls) not in self._layer_bases:
            found = None, set()
            for base in cls.bases:
                qual = self.qualname(base)[0]
                if self.frm == "torch" and self._layer_class(qual):
                    entry = self.table[qual]   # a subclass derives from its fallback where it has one (RC333)
                    found = (self.src.segment(base), (self._fallback(entry) or entry,)), _self_binds(cls)
                    break
            self._layer_bases[id(cls)] = found
        return self._layer_bases[id(cls)]

    def _self_layers(self, cls: ast.ClassDef) -> dict[str, tuple[str, tuple[Entry, ...]]]:
        if id(cls) in self._layers_by_class:
            return self._layers_by_class[id(cls)]
        made: dict[str, list] = {}
        for node in tree_index.index(self.tree).inside(cls, ast.Assign, ast.AnnAssign, ast.AugAssign):
            for t in node.targets if isinstance(node, ast.Assign) else [node.target]:
                if names.is_self_attr(t):
                    made.setdefault(t.attr, []).append(node.value)
        layers = {}
        for attr, values in made.items():
            calls = [v for v in values if isinstance(v, ast.Call)]
            entries = tuple(self.table.get(self.qualname(c.func)[0] or "") for c in calls)
            if len(calls) == len(values) and entries and all(e is not None and e.tensors is not None
                                                              for e in entries):
                layers[attr] = (" or ".join(self.src.segment(c.func) for c in calls), entries)
            elif len(values) == 1 and self._keyed_container(values[0]):
                # nn.ModuleDict(dict(wpe=nn.Embedding(...))): self.X.wpe is that layer
                for key, member in _keyed_members(values[0].args[0]):
                    entry = self.table.get(self.qualname(member.func)[0] or "") if isinstance(member, ast.Call) \
                        else None
                    if entry is not None and entry.tensors is not None:
                        layers[f"{attr}.{key}"] = (self.src.segment(member.func), (entry,))
        self._layers_by_class[id(cls)] = layers
        return layers

    def _keyed_container(self, value: ast.AST) -> bool:
        """A call of a container of layers by key (ModuleDict) given them in its one argument."""
        qual = self.qualname(value.func)[0] if isinstance(value, ast.Call) else None
        return qual is not None and qual.rsplit(".", 1)[1] in self.framework.mappings \
            and len(value.args) == 1 and not value.keywords

    def _narrowed_attribute(self, node: ast.Attribute) -> bool:
        """m.weight where m is narrowed to layer classes that hold it elsewhere (or self.bn.weight where self.bn is
        made of one): m.gamma where they all hold it at one place; recompat.runtime.layer_tensor(m, 'weight') where
        at several (BatchNorm2d's gamma, BatchNorm3d's bn2d.gamma) or where the class is computed
        (isinstance(m, type(norm))), a read only; left with the reason where one of them has none. True when
        taken."""
        known = self._layer_of(node.value, node.attr)
        if known is None:
            return False
        name, attr = self.src.segment(node.value), node.attr
        classes, entries = known
        if entries is None:
            places = None if attr in self._moved_attributes else {attr}     # None: known when it runs
        else:
            places = {e.mindspore_attribute(attr) for e in entries}
        if places == {attr}:
            return False
        site = self.site(node, f"{classes}.{attr}")
        load = isinstance(node.ctx, ast.Load)
        if places is not None and len(places) == 1 and None not in places:
            new = places.pop()
            end = self.src.end(node)
            self.src.replace(end - len(attr), end, new)
            self.diag(site, "RC315", receiver=name, old=attr, new=new, classes=classes)
        elif load and (places is None or None not in places):
            self.src.replace_node(node, f"{runtime(RUNTIME_LAYER_TENSOR)}({name}, {attr!r})")
            self.diag(site, "RC316", receiver=name, old=attr, classes=classes, runtime=RUNTIME_LAYER_TENSOR,
                      places="decided by the class it has when it runs" if places is None
                      else "at " + " or ".join(sorted(places)))
        else:
            reasons = sorted({w for e in entries or () if (w := e.attribute_why(attr))})
            why = (f"has no {attr}" + (f" ({'; '.join(reasons)})" if reasons else "")
                   if places is not None and None in places else
                   f"may hold {attr} elsewhere, and a write cannot be looked up when it runs")
            self.diag(site, "RC303", api=f"{name}.{attr}", what=f"{name} is {classes} here, whose MindSpore "
                                                                f"counterpart {why}")
        return True

    def visit_Attribute(self, node: ast.Attribute):
        if id(node) not in self._seen and (entry := self._renamed_methods.get(node.attr)) is not None \
                and self._names_a_model(node.value):
            self._seen.add(id(node))   # cls.forward, type(self).forward, Base.forward, cls.forward = ...: renamed
            self._rename_attr(node, entry)
            return self.visit(node.value)
        if isinstance(node.value, (ast.Name, ast.Attribute)) and self._narrowed_attribute(node):
            return
        if not isinstance(node.ctx, ast.Load) and isinstance(node.value, ast.Attribute):
            self._narrowed_attribute(node.value)    # self.bn.bias.requires_grad = False: the receiver is read
        if id(node) in self._seen:
            return
        if not isinstance(node.ctx, ast.Load):
            qual, root = self.qualname(node)
            if self.ours(qual):    # cudnn.benchmark = True: the framework's own state, set; it stays, imported
                self._seen.add(id(node))
                self._unknown(node, qual, root)
            return
        qual, root = self.qualname(node)
        if self.ours(qual):
            self._seen.add(id(node))
            self._reference(node, qual, root)
            return
        if (qual is None and node.attr in self.framework.tensor_attributes and self._tensor_receiver(node.value)
                and (node.attr not in self.framework.generic_attributes or getattr(self, "_in_model", False))):
            entry = self.attributes.get(node.attr)
            if entry is None:
                self._unknown(node, f"{self.framework.tensor_class}.{node.attr}", None)
            else:
                RULES.handler(entry.rule, "attribute")(self, node, entry)
        self.generic_visit(node)

    def visit_FormattedValue(self, node: ast.FormattedValue):
        """f"{loss:.4f}": MindSpore's Tensor takes no format spec, torch formats a one-element tensor as its number:
        a value formatted as a float (e, f, g, %) is given as float(value), which formats a number the same."""
        spec = node.format_spec
        if (self.to == "mindspore" and spec is not None and len(spec.values) == 1
                and isinstance(text := spec.values[0], ast.Constant) and str(text.value)[-1:] in _FLOAT_FORMATS
                and not isinstance(node.value, ast.Constant) and not self._plainly_no_value(node.value)
                and not (isinstance(node.value, ast.Call) and isinstance(node.value.func, ast.Name)
                         and node.value.func.id == "float")):
            value = self.src.segment(node.value)
            self.src.insert(self.src.start(node.value), "float(")
            self.src.insert(self.src.end(node.value), ")")
            self.diag(self.site(node.value, f"{self.framework.tensor_class}.__format__"), "RC346",
                      value=value, spec=text.value)
        self.generic_visit(node)

    def visit_Name(self, node: ast.Name):
        if node.id not in self._imported_names or id(node) in self._seen or not isinstance(node.ctx, ast.Load):
            return     # most names read are locals: only an imported one can name an API
        qual, root = self.qualname(node)
        if qual == self.frm:        # the bare module (`getattr(torch, name)`): not an API use, but it stays
            self.keep(node, root)
        elif self.ours(qual):
            self._reference(node, qual, root)

    # -- one use -----------------------------------------------------------------------------------

    def _unknown(self, node: ast.AST, qual: str, root: str | None) -> None:
        self.keep(node, root)
        if qual in self.skip or any(qual.startswith(s + ".") for s in self.skip):
            return
        self.diag(self.site(node, qual), "RC301", api=qual)

    def _reference(self, node: ast.AST, qual: str, root: str | None) -> None:
        """A source API named but not called here: a base class, an annotation, a class or function passed as a
        value (`act = F.gelu`, `partial(F.softmax, dim=-1)`)."""
        entry = self.table.get(qual)
        handler = RULES.handler(entry.rule, "reference") if entry else None
        if handler is None and qual in self.framework.tensor_types and id(node) in self._annotation_positions:
            tensor = self.table.get(self.framework.tensor_class)
            if tensor is not None and tensor.proven:
                dst = tensor.names(self.to)[0]
                self.targets.add(dst)
                self.src.replace_node(node, target(dst))
                return self.diag(self.site(node, qual), "RC330", api=qual, target=dst)
        if handler is None:
            return self._unknown(node, qual, root)
        handler(self, node, entry, qual, root)

    @RULES.register("api_value", on="reference")
    @RULES.register("api_class", on="reference")
    @RULES.register("api_function", on="reference")
    @RULES.register("optimizer", on="reference")
    @RULES.register("loss", on="reference")
    @RULES.register("lr_schedule", on="reference")
    def _class_reference(self, node: ast.AST, entry: Entry, qual: str, root: str | None) -> None:
        site = self.site(node, qual)
        if not entry.proven:
            self.keep(node, root)
            return self.diag(site, "RC302", api=qual, id=entry.id)
        dst = entry.names(self.to)[0]
        self.targets.add(dst)
        differing = [getattr(p, self.to) or getattr(p, self.frm) for p in entry.params
                     if p.fill and getattr(p, self.frm) and getattr(p, self.to)
                     and getattr(p, f"{self.frm}_default") is not None and getattr(p, f"{self.to}_default") is not None
                     and not convert.same(getattr(p, f"{self.frm}_default"), getattr(p, f"{self.to}_default"))
                     and not p.convert]
        same_call = not differing and not entry.form and all(   # (a parameter only the target has is never given)
            p.action == "keep" and getattr(p, self.frm) == getattr(p, self.to) and not p.convert
            for p in entry.params if getattr(p, self.frm) is not None)
        # a function whose call is the same is renamed (GRAPH mode compiles it); any other goes through the adapter
        adapted = self.to == "mindspore" and (entry.rule == "api_class" or entry.rule == "api_function"
                                              and not same_call)
        if adapted and (cls := self._layer_subclasses.get(id(node))) is not None and self._layer_class(qual):
            if (fallback := self._fallback(entry)) is not None:
                # the fallback takes torch's arguments and keeps torch's attributes, which a subclass reads
                fb = fallback.names(self.to)[0]
                self.targets.add(fb)
                self.src.replace_node(node, target(fb))
                return self.diag(site, "RC333", api=qual, target=fb, cls=cls.name, id=fallback.id)
            # a subclass's __init__ calls the layer's with torch's arguments: they are translated when it is made
            self.src.replace_node(node, self._adapter(entry))
            return self.diag(site, "RC325", api=qual, target=dst, adapter=RUNTIME_ADAPTER, cls=cls.name)
        if id(node) in self._type_positions or (same_call and not adapted):
            self.src.replace_node(node, target(dst))
            self.diag(site, "RC300", source=qual, target=dst)
        elif adapted:
            # passed around as a value, the class is called elsewhere with torch's arguments: they are translated
            # where it is called, by the same entry (recompat.runtime.torch_signature), even where the parameters
            # are the same (torch's layers take a list where MindSpore's take a tuple)
            self.src.replace_node(node, self._adapter(entry))
            self.diag(site, "RC313", source=qual, target=dst, adapter=RUNTIME_ADAPTER)
        else:
            self.src.replace_node(node, target(dst))
            what = (f"the defaults that differ ({', '.join(differing)})" if differing
                    else "its renamed or converted parameters")
            self.diag(site, "RC305", api=qual, target=dst, what=what)

    def _fallback(self, entry: Entry) -> Entry | None:
        """The proven entry that stands in for `entry` where it cannot carry a call (mappings: fallback_for);
        translating to MindSpore only (fallbacks are recompat.runtime's)."""
        fallback = self.m.fallback(entry) if self.to == "mindspore" else None
        return fallback if fallback is not None and fallback.proven else None

    def _fall_back(self, call: ast.Call, entry: Entry, fallback: Entry, site: Site, m: _Manual, qual: str,
                   root: str | None, method: bool, keep_callee: bool) -> None:
        """A call `entry` cannot carry (m) made as its fallback entry's target, which takes torch's arguments
        (nn.LayerNorm(d, elementwise_affine=False) -> recompat.runtime.LayerNorm(d, elementwise_affine=False)):
        one site, the fallback's, told why (RC332)."""
        self.sites.remove(site)
        first = len(self.sites)
        self._call(call, fallback, qual, root, method, keep_callee)
        f = m.fields
        if {"param", "value", "why"} <= set(f):
            reason = f"{f['param']}={f['value']} has no counterpart in {entry.names(self.to)[0]} ({f['why']})" \
                if f["value"] else f"{f['param']}: {f['why']}"
        else:
            reason = f.get("what", m.code)
        self.diag(self.sites[first], "RC332", api=qual, target=fallback.names(self.to)[0], reason=reason,
                  id=fallback.id)

    def _adaptable(self, entry: Entry, method: bool, keep_callee: bool) -> bool:
        """May the call go through recompat.runtime.torch_signature, its torch arguments translated as the program
        runs? A layer being made (not a base class's __init__ called by a subclass); a function called at module
        level or in an __init__ (GRAPH mode compiles what construct calls, and the adapter translates in Python)."""
        if self.to != "mindspore" or method or keep_callee:
            return False
        return entry.rule == "api_class" or (entry.rule == "api_function"
                                             and (self.func is None or self.func.name == "__init__"))

    def _layer_class(self, qual: str | None) -> bool:
        """Is `qual` a layer class of an entry (api_class), not the model base, a container or the tensor class: one
        whose subclass is made through the runtime adapter (RC325) and reads the layer's attributes as MindSpore's
        layer keeps them?"""
        entry = self.table.get(qual or "")
        return entry is not None and entry.rule == "api_class" \
            and qual not in (*self.framework.model_bases, self.framework.tensor_class) \
            and qual.rsplit(".", 1)[1] not in names.containers()

    @functools.cached_property
    def _layer_subclasses(self) -> dict[int, ast.ClassDef]:
        """id(base expression) -> the class it is a base of."""
        return {id(b): cls for cls in tree_index.index(self.tree).of(ast.ClassDef) for b in cls.bases}

    def _adapter(self, entry: Entry) -> str:
        """torch_signature(<the MindSpore class>, '<the torch class>'): the class, made with torch's arguments
        (recompat.runtime)."""
        return f"{runtime(RUNTIME_ADAPTER)}({target(entry.names(self.to)[0])}, {entry.names(self.frm)[0]!r})"

    @functools.cached_property
    def _annotation_positions(self) -> set[int]:
        """The nodes inside an annotation (a parameter's, a return's, an annotated assignment's)."""
        index = tree_index.index(self.tree)
        roots = [n.returns for n in index.of(ast.FunctionDef, ast.AsyncFunctionDef) if n.returns is not None]
        roots += [n.annotation for n in index.of(ast.arg, ast.AnnAssign) if n.annotation is not None]
        return _subtree_ids(roots)

    @functools.cached_property
    def _type_positions(self) -> set[int]:
        """The nodes where a class is a type and is not called with torch's arguments: base classes, annotations,
        isinstance's and issubclass's second argument, typing.cast's first, except clauses, a bare decorator (it
        is called with what it decorates: @torch.no_grad)."""
        roots: list[ast.AST] = []
        index = tree_index.index(self.tree)
        for n in index.of(ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef):
            roots += [d for d in n.decorator_list if not isinstance(d, ast.Call)]
            roots += n.bases if isinstance(n, ast.ClassDef) else [n.returns] if n.returns is not None else []
        roots += [n.annotation for n in index.of(ast.arg, ast.AnnAssign) if n.annotation is not None]
        roots += [n.type for n in index.of(ast.ExceptHandler) if n.type is not None]
        for n in index.of(ast.Call):
            if len(n.args) == 2 and ((isinstance(n.func, ast.Name) and n.func.id in ("isinstance", "issubclass"))
                                     or getattr(self._marker(n.func), "becomes", None) == "isinstance"):
                roots.append(n.args[1])
            elif n.args and (names.attribute_chain(n.func) or [""])[-1] == "cast" \
                    and self.qualname(n.func)[0] == "typing.cast":
                roots.append(n.args[0])
        return _subtree_ids(roots)

    def _base_init(self, func: ast.Attribute) -> Entry | None:
        """`super().__init__(...)` with arguments, in a class deriving from the model base itself: a call of the base
        class, so its entry decides the arguments (MindSpore's `auto_prefix=` goes, with the reason); the callee
        stays."""
        if not (func.attr == "__init__" and isinstance(func.value, ast.Call) and self._self_or_super(func.value)
                and self.cls is not None):
            return None
        bases = {self.qualname(b)[0] for b in self.cls.bases}
        base = next((b for b in self.framework.model_bases if b in bases), None)
        return self.table.get(base) if base is not None else None

    def _self_or_super(self, node: ast.AST) -> bool:
        if not getattr(self, "_in_model", False):
            return False
        return (isinstance(node, ast.Name) and node.id == "self") or (
            isinstance(node, ast.Call) and isinstance(node.func, ast.Name) and node.func.id == "super")

    @RULES.register("method_name", on="method_call")
    def _method_call(self, call: ast.Call, entry: Entry) -> bool:
        """`self.forward(...)`, `super().forward(...)` in a model: the method's new name."""
        if id(call.func) in self._seen:   # visit_Attribute renamed it
            return True
        if not self._self_or_super(call.func.value):
            return False
        self._rename_attr(call.func, entry)
        return True

    @functools.cached_property
    def _renamed_methods(self) -> dict[str, Entry]:
        """The model methods the translation renames (forward -> construct), by their source name: proven entries."""
        return {e.names(self.frm)[0].rsplit(".", 1)[1]: e for es in self.by_attr.values() for e in es
                if e.rule == "method_name" and e.proven}

    def _names_a_model(self, node: ast.AST) -> bool:
        """Does `node` name a model class or instance whose methods the translation renames: self, cls, super()
        and type(self) in a model class, or a model class of the file or the tree by its name?"""
        in_model = getattr(self, "_in_model", False)
        if isinstance(node, ast.Call) and isinstance(node.func, ast.Name) and not node.keywords:
            return in_model and (node.func.id == "super" or node.func.id == "type" and len(node.args) == 1)
        if isinstance(node, ast.Name) and node.id in ("self", "cls"):
            return in_model
        if (isinstance(node, ast.Name) and node.id in self.model_classes) or self._model_base(node):
            return True
        return self.scope is not None and names.scope_container_kind(self.scope, node) == names.CELL   # self.layer

    def _method_named(self, call: ast.Call) -> bool:
        """getattr(self, "forward"), hasattr, setattr, delattr on what names a model: the string renamed."""
        if not (isinstance(call.func, ast.Name) and call.func.id in ("getattr", "hasattr", "setattr", "delattr")
                and len(call.args) >= 2 and isinstance(name := call.args[1], ast.Constant)
                and isinstance(name.value, str) and (entry := self._renamed_methods.get(name.value)) is not None
                and self._names_a_model(call.args[0])):
            return False
        new = entry.names(self.to)[0].rsplit(".", 1)[1]
        text = self.src.segment(name)
        self.src.replace_node(name, text.replace(name.value, new, 1))
        self.diag(self.site(name, entry.names(self.frm)[0]), "RC300", source=text, target=text.replace(name.value, new, 1))
        return True

    @RULES.register("model_method", on="method_call")
    def _model_method(self, call: ast.Call, entry: Entry) -> bool:
        """`self.add_module(...)`, `super().train()` in a model, `layers.add_module(...)` on a container the code
        builds (`layers = nn.Sequential()`, `self.layers = nn.Sequential()`): a method of the model base class."""
        receiver = call.func.value
        own = self._self_or_super(receiver)
        if not (own or self._layer_receiver(receiver)) or (own and call.func.attr in self._own_methods):
            return False
        special = entry.in_subclass_of if self.frm == "torch" else None
        if special and own and self.cls and (base := self._derives_from(self.cls, set(special["classes"]))):
            what, text = f"{self.cls.name} derives from {base}", "self"
        elif special and not own:
            what = ("a container of layers the code builds" if self._container(receiver)
                    else "a layer whose class is not known here")
            text = self.src.render_node(receiver)
        else:
            self._call(call, entry, entry.names(self.frm)[0], None, method=True)
            return True
        # another method there: recompat.runtime's function, the receiver first, then the source method's arguments
        self.src.replace_node(call.func, runtime(special["runtime"]))
        self.src.insert(self.src.end(call.func) + 1, f"{text}, " if call.args or call.keywords else text)
        self.diag(self.site(call.func, entry.names(self.frm)[0]), "RC314", api=entry.names(self.frm)[0],
                  receiver=text, what=what, runtime=special["runtime"], why=special["why"])
        return True

    def _layer_receiver(self, node: ast.AST) -> bool:
        """`block.modules()`: taken for a layer where the code shows one (a layer or a container it builds) or
        shows nothing else, as a tensor method's receiver is taken for a tensor; not a module, a literal, a
        function, nor anything outside a function."""
        return not self._plainly_no_value(node) and \
            names.scope_container_kind(self.scope, node) in (names.CELL, names.CONTAINER, names.UNKNOWN)

    def _container(self, node: ast.AST) -> bool:
        """A container of layers the code builds: a name, or an attribute of self, bound to one."""
        return (self.scope is not None and (isinstance(node, ast.Name) or names.is_self_attr(node))
                and names.scope_container_kind(self.scope, node) == names.CONTAINER)

    def _derives_from(self, cls: ast.ClassDef, classes: set[str], seen=()) -> str | None:
        """The one of `classes` `cls` derives from, through the file's own classes; None if none."""
        for b in cls.bases:
            qual, _ = self.qualname(b)
            if qual in classes:
                return qual
            local = self._classes.get(b.id) if isinstance(b, ast.Name) else None
            if local is not None and local is not cls and local.name not in seen \
                    and (found := self._derives_from(local, classes, (*seen, cls.name))):
                return found
        return None

    @functools.cached_property
    def _classes(self) -> dict[str, ast.ClassDef]:
        """The file's classes by name."""
        return {c.name: c for c in tree_index.index(self.tree).of(ast.ClassDef)}

    @functools.cached_property
    def _own_methods(self) -> set[str]:
        """Methods the file's classes define: `self.train()` then calls the project's own (or its override)."""
        return {f.name for c in self._classes.values() for f in c.body
                if isinstance(f, (ast.FunctionDef, ast.AsyncFunctionDef))}

    @RULES.register("tensor_method", on="method_call")
    def _tensor_method(self, call: ast.Call, entry: Entry) -> bool:
        if not self._tensor_receiver(call.func.value):
            return False
        self._call(call, entry, entry.names(self.frm)[0], None, method=True)
        return True

    @RULES.register("tensor_attribute", on="attribute")
    def _tensor_attribute(self, node: ast.Attribute, entry: Entry) -> None:
        """`x.shape`: renamed where the names differ; converted only when the entry is proven."""
        source, target = entry.names(self.frm)[0], entry.names(self.to)[0]
        site = self.site(node, source)
        if not entry.proven:
            return self.diag(site, "RC302", api=source, id=entry.id)
        if target.startswith(RUNTIME_MODULE + "."):   # `x.requires_grad` -> requires_grad(x): MindSpore has none
            name = target.rsplit(".", 1)[1]
            self.targets.add(target)
            self.src.insert(self.src.start(node.value), runtime(name) + "(")
            self.src.replace(self.src.end(node.value), self.src.end(node), ")")
            return self.diag(site, "RC345", source=source, target=name, receiver=self.src.segment(node.value),
                             id=entry.id)
        new = target.rsplit(".", 1)[1]
        if new != node.attr:
            end = self.src.end(node)
            self.src.replace(end - len(node.attr), end, new)
        self.diag(site, "RC300", source=source, target=target)

    def _rename_attr(self, attr: ast.Attribute, entry: Entry) -> None:
        new = entry.names(self.to)[0].rsplit(".", 1)[1]
        end = self.src.end(attr)
        self.src.replace(end - len(attr.attr), end, new)
        self.diag(self.site(attr, entry.names(self.frm)[0]), "RC300", source=f".{attr.attr}", target=f".{new}")

    def _plainly_no_value(self, node: ast.AST) -> bool:
        """A receiver no tensor or layer method is called on: in a class body outside its methods, a literal,
        self, cls, a module, a class or function the file defines (`_GridPull.apply(...)`: an autograd.Function's).
        At module level as in a function: a training script's loop is often there (`model.parameters()`)."""
        in_class_body = self.func is None and self.cls is not None
        return in_class_body or isinstance(node, _LITERAL_RECEIVERS) or (isinstance(node, ast.Name) and (
            node.id in ("self", "cls") or self.scope.qualname(node.id) is not None
            or (found := self.scope.lookup(node.id)) is not None
            and found.kinds.get(node.id) in (names.CLASS, names.FUNCTION)))

    def _tensor_receiver(self, node: ast.AST) -> bool:
        """`x.view(...)`: taken for a tensor unless it is plainly something else (a module, self, a Cell
        attribute, a literal)."""
        if self._plainly_no_value(node):
            return False
        if isinstance(node, ast.Attribute) and isinstance(node.value, ast.Name) and node.value.id == "self":
            return self.scope.class_attrs.get(node.attr, names.UNKNOWN) == names.UNKNOWN
        return True

    # -- calls -------------------------------------------------------------------------------------

    @RULES.register("api_class")
    @RULES.register("api_function")
    @RULES.register("optimizer")
    @RULES.register("loss")
    @RULES.register("lr_schedule")
    @RULES.register("grad_clip")
    def _call(self, call: ast.Call, entry: Entry, qual: str, root: str | None, method: bool = False,
              keep_callee: bool = False) -> None:
        site = self.site(call, qual)
        if entry.runtime and self.to == "mindspore" and entry.rule == "grad_clip":   # on recompat's .grad
            self.targets.add(entry.runtime)
            self.src.replace_node(call.func, target(entry.runtime))
            return self.diag(site, "RC342", api=qual, target=entry.runtime.rsplit(".", 1)[1])
        if entry.holding_none and self.to == "mindspore" and entry.proven and _may_hold_none(call):
            dst = entry.holding_none["mindspore"]
            self.targets.add(dst)
            self.src.replace_node(call.func, target(dst))
            return self.diag(site, "RC331", api=qual, target=dst, why=entry.holding_none["why"])
        try:
            if not entry.proven:
                raise _Manual("RC302", api=qual, id=entry.id)
            if entry.form == "size_shape" and self.to == "mindspore":
                return self._size_to_shape(call, site, qual)
            filled = self._tensor_to_fill(call, entry, method) \
                if entry.form in TENSOR_FORMS and self.to == "mindspore" else None
            passed = (filled, self.src.peek_node(filled)) if filled is not None else None   # before _plan renders it
            plan = self._plan(call, entry, qual, adaptable=self._adaptable(entry, method, keep_callee))
            plan.passed = passed
            holder = self._built_into(call, plan) if plan.after else None
        except _Manual as m:
            if (fallback := self._fallback(entry)) is not None:
                return self._fall_back(call, entry, fallback, site, m, qual, root, method, keep_callee)
            if m.deferred and self._adaptable(entry, method, keep_callee):
                # the torch arguments are translated when the layer is made or the function called, by the same entry
                self.src.replace_node(call.func, self._adapter(entry))
                return self.diag(site, "RC317" if entry.rule == "api_class" else "RC326", api=qual,
                                 target=entry.names(self.to)[0], adapter=RUNTIME_ADAPTER, why=m.fields["why"])
            self.keep(call, root)
            fields = {"api": qual, **m.fields}
            return self.diag(site, m.code, **fields)
        self._apply(call, entry, plan, method, keep_callee)
        if plan.after:
            self._initialize_after(holder, plan, site, qual)
        for code, fields in plan.notes:
            self.diag(site, code, **fields)
        if entry.table_row is not None:   # the table's row is its evidence: say so whatever else is said
            self.diag(site, "RC323", source=qual, target=entry.names(self.to)[0], evidence=entry.table_row)
        elif not any(d.status != "converted" for d in site.diagnostics):
            self.diag(site, "RC300", source=qual, target=entry.names(self.to)[0])
        if entry.domain and self.to == "mindspore":   # what the domain probes found it to differ on
            parts = [part for part, _ in entry.domain]
            self.diag(site, "RC327", api=qual, target=entry.names(self.to)[0], parts="; ".join(parts),
                      first=entry.domain[0][1].removeprefix("differs: "))

    # -- a MindSpore layer's initializer arguments (weight_init='ones'), as torch.nn.init calls after it is built --

    @functools.cached_property
    def _initializers(self) -> tuple[dict[str, Entry], dict[str, Entry]]:
        """init.yaml's entries by the MindSpore initializer class they stand for, and by the strings MindSpore
        takes for that class (`strings`); the first entry of a class is its torch.nn.init function."""
        by_class: dict[str, Entry] = {}
        by_string: dict[str, Entry] = {}
        for e in self.m.entries:
            if e.form == "initializer" and e.rule == "api_function":
                for name in e.names("mindspore"):
                    by_class.setdefault(name, e)
                for text in e.mindspore.get("strings", ()):
                    by_string.setdefault(text, e)
        return by_class, by_string

    def _torch_init(self, value: ast.expr, param: str, plan: "_Plan") -> tuple[str, list[str]]:
        """(the torch.nn.init function, its arguments after the tensor) of an initializer a MindSpore layer is
        given: a string MindSpore takes for a class ('ones', 'he_uniform'), a number (Constant), or a call of an
        initializer class (Normal(0.02)). Raises _Manual for anything else."""
        by_class, by_string = self._initializers
        text = self.src.segment(value)
        number = value.operand if isinstance(value, ast.UnaryOp) and isinstance(value.op, ast.USub) else value
        call, entry, qual = None, None, None
        if isinstance(value, ast.Constant) and isinstance(value.value, str):
            entry = by_string.get(value.value.lower())   # MindSpore looks the name up in lower case
        elif isinstance(number, ast.Constant) and type(number.value) in (int, float):
            entry = by_class.get("mindspore.common.initializer.Constant")
            call = ast.Call(ast.Name("Constant", ast.Load()), [value], [])   # MindSpore's initializer() makes that
        elif isinstance(value, ast.Call):
            qual = self.qualname(value.func)[0]
            entry, call = by_class.get(qual or ""), value
        if entry is None or not entry.proven:
            raise _Manual("RC309", param=param, value=text, why="an initializer with no torch.nn.init counterpart")
        init = self._plan(call or ast.Call(ast.Name("_", ast.Load()), [], []), entry, qual or entry.names("mindspore")[0])
        plan.notes += init.notes
        args = [f"{name}={self._targets_in(t)}" for _, name, t, _ in init.args if name and name != "tensor"]
        args += [f"{k}={self._targets_in(v)}" for k, v in init.values.items()]
        dst = entry.names("torch")[0]
        self.targets.add(dst)
        return target(dst), args

    def _built_into(self, call: ast.Call, plan: "_Plan") -> str:
        """The name or attribute the layer `call` builds is assigned to, by a statement of its own line: the
        torch.nn.init calls go after it. Raises _Manual elsewhere (inside an expression, a list, a call)."""
        stmt = self.stmt
        if (isinstance(stmt, ast.Assign) and stmt.value is call and len(stmt.targets) == 1
                and names.attribute_chain(stmt.targets[0]) and len(self.src.indent(stmt.lineno)) == stmt.col_offset):
            return self.src.segment(stmt.targets[0])
        a, _, init, _ = plan.after[0]
        raise _Manual("RC322", param=a.name, value=self.src.segment(a.value), init=init.replace("\x00", ""))

    def _initialize_after(self, holder: str, plan: "_Plan", site: Site, qual: str) -> None:
        """Each torch.nn.init call on its own line after the statement that builds the layer."""
        stmt, src = self.stmt, self.src
        at = src.line_end(stmt.end_lineno)
        lead = "" if src.text[:at].endswith("\n") else "\n"
        lines = [f"{src.indent(stmt.lineno)}{init}({', '.join([f'{holder}.{tensor}', *args])})"
                 for _, tensor, init, args in plan.after]
        src.insert(at, lead + "\n".join(lines) + ("\n" if not lead else ""))
        self.diag(site, "RC321", api=qual, calls="; ".join(line.strip().replace("\x00", "") for line in lines))

    def _bind(self, call: ast.Call, entry: Entry, qual: str,
              adaptable: bool = False) -> tuple[list[_Arg], list[tuple[str, dict]]]:
        sig = signature(getattr(entry, self.frm)["signature"])
        if sig is None:
            raise _Manual("RC303", what="its recorded signature cannot be read")
        positional, vararg, kwonly, kwarg = sig
        bound, notes = [], []
        # (adaptable: arguments only the running program shows are translated as it runs, RC317 and RC326)
        for i, a in enumerate(call.args):
            if isinstance(a, ast.Starred):
                if vararg is None or i < len(positional):
                    what = f"*{self.src.segment(a.value)} spreads arguments over named parameters"
                    raise _Manual("RC303", what=what, why=what, deferred=adaptable)
                bound.append(_Arg(f"*{vararg}", a, i))
            elif i < len(positional):
                bound.append(_Arg(positional[i], a, i))
            elif vararg is not None:
                bound.append(_Arg(f"*{vararg}", a, i))
            else:
                raise _Manual("RC303", what=f"more positional arguments than {qual} takes")
        for k in call.keywords:
            if k.arg is None:
                what = f"**{self.src.segment(k.value)}"
                if adaptable:
                    raise _Manual("RC304", what=what, why=f"{what} holds keywords only the running program shows",
                                  deferred=True)
                notes.append(("RC304", {"api": qual, "what": what, "target": entry.names(self.to)[0]}))
                continue
            name = entry.keyword(k.arg, self.frm)   # an older spelling MindSpore takes (axis= for dim=)
            if name not in positional and name not in kwonly and kwarg is None:
                raise _Manual("RC303", what=f"{k.arg}= is not a parameter of it")
            if any(b.name == name for b in bound):   # torch raises TypeError on such a call
                raise _Manual("RC303", what=f"{name} is given twice, by place and by keyword")
            bound.append(_Arg(name if (name in positional or name in kwonly) else f"**{kwarg}", k, None))
        return bound, notes

    def _plan(self, call: ast.Call, entry: Entry, qual: str, adaptable: bool = False) -> "_Plan":
        """What the call becomes: each argument's new name and value, the values to add, the notes. `adaptable`:
        the call may go through the runtime adapter (_adaptable)."""
        bound, notes = self._bind(call, entry, qual, adaptable)
        plan = _Plan(notes=notes)
        given = {a.name: a for a in bound}
        handled = self._plan_conversions(plan, entry, qual, bound, given)
        for a in bound:
            if a.name not in handled:
                self._plan_argument(plan, entry, qual, a, adaptable)
        plan.args.sort(key=lambda x: bound.index(x[0]))
        self._plan_fills(plan, entry, qual, given)
        return plan

    def _plan_conversions(self, plan: "_Plan", entry: Entry, qual: str, bound: list[_Arg], given: dict) -> set[str]:
        """The params whose values change on the way (`convert:`), group by group; the source names handled."""
        frm, to = self.frm, self.to
        groups: dict[str, list] = {}
        for p in entry.params:
            s = getattr(p, frm)
            if s and entry.param(s, frm) is not p:
                continue   # an earlier row decides this source parameter (Dropout's p -> p, not keep_prob)
            if p.convert and (s or getattr(p, to)):
                groups.setdefault(p.convert, []).append(p)
        handled: set[str] = set()
        for conv, rows in groups.items():
            sources = {getattr(p, frm) for p in rows if getattr(p, frm)}
            if not any(s in given for s in sources) and not all(p.fill for p in rows):
                continue
            values, names_ = {}, {}
            for p in rows:
                s = getattr(p, frm)
                key = s or getattr(p, to)       # a row with no source name: its source default still counts
                if key in values:
                    continue
                text = self.src.render_node(given[s].value) if s in given else getattr(p, f"{frm}_default")
                if text is not None:
                    values[key], names_[key] = text, getattr(p, to)
            for a in bound:                     # the other arguments, for converters that look at them
                values.setdefault(a.name, self.src.segment(a.value))
            if not names_:
                continue
            try:
                out, note = convert.convert_text(conv, to, values, names_)
            except convert.Unconvertible as exc:   # raised as made: a local holding it would be a reference cycle
                raise _Manual("RC309", param=", ".join(sorted(sources & set(given)) or sources), value="",
                              why=str(exc), deferred=isinstance(exc, convert.Deferred)) from None
            if note:
                plan.notes.append(("RC310", {"api": qual, "what": note, "target": entry.names(to)[0]}))
            defaults = {getattr(p, to): getattr(p, f"{to}_default") for p in rows if getattr(p, to)}
            for s in sorted(sources & set(given), key=lambda s: bound.index(given[s])):
                name = getattr(entry.param(s, frm), to)
                if name in out:     # the argument stays where it is, with its new value
                    plan.args.append((given[s], name, out.pop(name), False))
                else:
                    plan.drop.append(given[s])
            for name, text in out.items():
                if not convert.same(text, defaults.get(name)):
                    plan.values[name] = text
            handled |= sources
        return handled

    def _plan_argument(self, plan: "_Plan", entry: Entry, qual: str, a: _Arg, adaptable: bool = False) -> None:
        """One argument by its param's decision: renamed, its value mapped, or dropped (with a note, or manual
        when the value matters); `adaptable`: the call may go through the runtime adapter (_adaptable)."""
        frm, to = self.frm, self.to
        p = entry.param(a.name, frm)
        if p is None:
            raise _Manual("RC303", what=f"{a.name} has no decision in mappings/")
        dst = getattr(p, to)
        if p.action == "drop" or dst is None:
            text = self.src.segment(a.value)
            if self.m.diagnostics.get(p.code or "", {}).get("status") == "manual":   # its value matters
                if not convert.same(text, getattr(p, f"{frm}_default")):
                    if not (p.fills and to == "torch"):
                        raise _Manual(p.code, param=a.name, value=text, why=p.why or "no counterpart")
                    plan.after.append((a, p.fills, *self._torch_init(a.value, a.name, plan)))
            elif not any(convert.same(text, getattr(p, f"{side}_default")) for side in (frm, to)):
                # (a value the source takes by default, or that the target does anyway, goes with nothing lost)
                plan.notes.append(("RC306", {"api": qual, "param": a.name, "why": p.why or "no counterpart"}))
            plan.drop.append(a)
            return
        if not p.fill and convert.same(getattr(p, f"{frm}_default") or "", "None"):
            # the source's None stands for its default, which the target's own default does (fill: false: torch's
            # dtype=None is float32, MindSpore's default; MindSpore's layers refuse dtype=None)
            value = self.src.segment(a.value)
            if convert.same(value, "None"):
                plan.drop.append(a)
                return
            if to == "mindspore" and not convert.is_literal(value) and self.qualname(a.value)[0] is None:
                if adaptable:   # None or a dtype, seen as it runs
                    raise _Manual("RC309", param=a.name, value=value, deferred=True,
                                  why=f"{a.name}={value} may be None, {frm}'s default, which the target refuses")
                plan.notes.append(("RC310", {"api": qual, "target": entry.names(to)[0], "what": (
                    f"{a.name}={value}: where it is None ({frm}'s default), leave it out: the target refuses None")}))
        text = self.src.render_node(a.value)
        if p.values:
            text = next((v for k, v in p.values.items() if convert.same(k, text)), None) if to == "mindspore" \
                else next((k for k, v in p.values.items() if convert.same(v, text)), None)
            if text is None:
                raise _Manual("RC309", param=a.name, value=self.src.segment(a.value), why="a value with no counterpart")
        if a.name.startswith("**") and dst.startswith("**"):   # a keyword that **kwargs takes on both sides
            plan.args.append((a, a.node.arg, text, False))
            return
        plan.args.append((a, dst.lstrip("*"), text, dst.startswith("*")))

    def _plan_fills(self, plan: "_Plan", entry: Entry, qual: str, given: dict) -> None:
        """Params left out whose two defaults differ, or that the target requires: the source default written out.
        A target param the source lacks gets what the source does instead (its source-side default)."""
        frm, to = self.frm, self.to
        for p in entry.params:
            s, d = getattr(p, frm), getattr(p, to)
            if p.convert or not p.fill or not d or (s and s in given) or d in plan.values:
                continue
            sd, td = getattr(p, f"{frm}_default"), getattr(p, f"{to}_default")
            if sd is None or (td is not None and convert.same(sd, td)) or (td is None and convert.same(sd, "None")):
                continue
            if convert.same(sd, "None"):    # decided at run time (Softmax's dim): no value to write
                raise _Manual("RC303", what=f"{s} left out: its default None is decided at run time; pass it")
            plan.values[d] = sd
            plan.notes.append(("RC307", {"api": qual, "param": s or d, "value": sd, "target": entry.names(to)[0]}))

    def _apply(self, call: ast.Call, entry: Entry, plan: "_Plan", method: bool, keep_callee: bool = False) -> None:
        src, to = self.src, self.to
        if entry.form == "initializer" and to == "mindspore":
            return self._initializer(call, entry, plan, method)
        if entry.form == "assigned" and to == "mindspore" and method:   # x.mul_(2) -> assign(x, x.mul(2))
            held = call.func.value
            receiver = src.peek_node(held.value if isinstance(held, ast.Attribute) and held.attr == "data" else held)
            self._apply(call, replace(entry, form=None), plan, method)   # the out-of-place call
            src.replace_node(call, f"{runtime(RUNTIME_ASSIGN)}({receiver}, {src.render_node(call)})")
            return
        dst = entry.names(to)[0]
        receiver_first = method and entry.rule == "tensor_method" \
            and not dst.startswith(self.m.frameworks[to].tensor_class + ".")
        if receiver_first:   # a method whose counterpart is a function (x.to(d) -> tensor_to(x, d)): x goes first
            receiver = src.render_node(call.func.value)
            opening = src.text.index("(", src.end(call.func))
            src.replace_node(call.func, target(dst))
            src.insert(opening + 1, f"{receiver}, " if call.args or call.keywords else receiver)
            self.targets.add(dst)
        elif keep_callee:
            pass
        elif method:
            new_name = dst.rsplit(".", 1)[1]
            end = src.end(call.func)
            if new_name != call.func.attr:
                src.replace(end - len(call.func.attr), end, new_name)
        else:
            src.replace_node(call.func, target(dst))
            self.targets.add(dst)
        if entry.form == "list_args":
            self._list_args(call, plan)
        elif entry.form == "one_list" and to == "mindspore":
            self._one_list(call, plan)
        elif entry.rule == "api_class" and to == "mindspore":
            self._number_lists_as_tuples(plan)
        if entry.form == "size_args":
            self._size_args(plan)
        elif entry.form == "values_of" and self.to == "mindspore":   # modules() -> (v for _, v in cells_and_names())
            src.insert(src.start(call), "(v for _, v in ")
            src.insert(src.end(call), ")")
        elif entry.form == "items_of" and self.to == "mindspore":    # named_children() -> name_cells().items()
            src.insert(src.end(call), ".items()")
        dst_sig = signature(getattr(entry, to)["signature"]) or ([], None, [], None)
        dst_positional = dst_sig[0][1:] if receiver_first else dst_sig[0]
        dropped = [a.index for a in plan.drop if a.index is not None]
        in_place = True
        kept = []
        for a, name, text, star in plan.args:
            if name is None:            # left as written, inside what another argument became
                kept.append(a.node)
                continue
            if dropped and a.index is not None and a.index > min(dropped):
                in_place = False
            if a.index is not None and in_place and (star or (a.index < len(dst_positional)
                                                             and dst_positional[a.index] == name)):
                src.replace_node(a.value, text)
            elif a.index is not None:
                in_place = False
                src.replace_node(a.node, f"{name}={text}")
            else:
                kw = a.node
                if name != kw.arg:
                    start = src.start(kw)
                    src.replace(start, start + len(kw.arg), name)
                src.replace_node(kw.value, text)
            kept.append(a.node)
        if plan.drop:
            edits.remove_arguments(src, call, [a.node for a in plan.drop])
            self.withdraw([a.node for a in plan.drop])
        extra = ", ".join(f"{k}={self._targets_in(v)}" for k, v in plan.values.items())
        if extra:
            last = max(kept, key=src.end, default=None) if kept else None
            if last is not None:
                src.insert(src.end(last), ", " + extra)
            else:
                src.insert(src.end(call) - 1, extra)

    def _initializer(self, call: ast.Call, entry: Entry, plan: "_Plan", method: bool = False) -> None:
        """nn.init.kaiming_normal_(w, a=0.01) -> initialized(w, HeNormal(negative_slope=0.01)), w.normal_(0, 2) ->
        initialized(w, Normal(mean=0, sigma=2)): the tensor filled in place goes to recompat.runtime.initialized, the
        other arguments to the initializer class. A tensor given through a function that returns it unchanged
        (frameworks.yaml same_tensor: torch.as_tensor(w)) is passed itself: the MindSpore counterpart would copy
        it, and the copy would be filled."""
        if method:
            tensor, held = None, call.func.value
            text = self.src.render_node(held)
        else:
            first = signature(entry.torch["signature"])[0][0]
            tensor = next(x for x in plan.args if x[0].name == first)
            text, held = tensor[2], tensor[0].value
        if plan.passed is not None:       # the call around the tensor goes, and what was found in it
            held, text = plan.passed
            self.withdraw([tensor[0].value], keep=[held])
        if isinstance(held, ast.Attribute) and held.attr == "data":     # w.data: w's storage
            held = held.value
        if (isinstance(held, ast.Attribute) and held.attr in self._moved_tensors
                and self._layer_of(held.value) is None):
            plan.notes.append(("RC310", {"api": entry.names(self.frm)[0], "target": entry.names(self.to)[0],
                                         "what": f"{self.src.segment(held)}: where it is a layer whose MindSpore "
                                                 f"counterpart holds {held.attr} elsewhere (BatchNorm: gamma), it "
                                                 "fails; check it with isinstance(..., the layer class) around it"}))
        rest = [f"{name}={value}" for a, name, value, _ in plan.args if tensor is None or a is not tensor[0]]
        rest += [f"{k}={self._targets_in(v)}" for k, v in plan.values.items()]
        self.withdraw([a.node for a in plan.drop])
        dst = entry.names(self.to)[0]
        self.src.replace_node(call, f"{runtime(RUNTIME_INITIALIZED)}({text}, {target(dst)}({', '.join(rest)}))")
        self.targets.add(dst)

    def _tensor_to_fill(self, call: ast.Call, entry: Entry, method: bool = False) -> ast.AST | None:
        """The tensor an initializer fills (a method's receiver, or the argument given by position or keyword): t
        itself in nn.init.X_(torch.as_tensor(t)) (frameworks.yaml same_tensor: the MindSpore counterpart would copy
        it), None where it is written as it is. _Manual where there is none, or it is no tensor held by a name or
        attribute: a view (w[0], w.t(), w.T) or a result would be filled as a copy on MindSpore, leaving the tensor
        it came from as it was (a Parameter's .data shares its storage: kept); but a new tensor's method
        (torch.zeros(n).fill_(v), frameworks.yaml fresh_tensor) fills what the call gives."""
        first = signature(entry.torch["signature"])[0][0] if not method else None
        node = call.func.value if method else \
            call.args[0] if call.args else next((k.value for k in call.keywords if k.arg == first), None)
        if node is None:
            raise _Manual("RC303", what="no tensor to fill is given")
        inner = node.args[0] if (isinstance(node, ast.Call) and len(node.args) == 1 and not node.keywords
                                 and self.qualname(node.func)[0] in self.framework.same_tensor) else None
        held = inner if inner is not None else node
        fresh = isinstance(held, ast.Call) and self.qualname(held.func)[0] in self.framework.fresh_tensor \
            and method   # torch.zeros(n).fill_(v): nothing else holds the tensor, the call's value is what is used
        if not (fresh or isinstance(held, ast.Name) or (isinstance(held, ast.Attribute) and (
                held.attr == "data" or held.attr not in self.framework.tensor_attributes))):
            raise _Manual("RC303", what=f"the tensor written in place, {self.src.segment(held)}, is a view or a "
                                        "result: MindSpore would write a copy; write the tensor it comes from")
        return inner

    def _list_args(self, call: ast.Call, plan: "_Plan") -> None:
        """Sequential(a, b) <-> SequentialCell([a, b]); an OrderedDict goes as it is."""
        args = call.args
        if not args or (len(args) == 1 and isinstance(args[0], ast.Call)
                        and (names.attribute_chain(args[0].func) or [""])[-1] == "OrderedDict"):
            return
        if self.to == "mindspore":
            self.src.insert(self.src.start(args[0]), "[")
            self.src.insert(self.src.end(args[-1]), "]")
            return
        if len(args) != 1 or isinstance(args[0], ast.Starred):
            return
        k = next(i for i, (a, *_) in enumerate(plan.args) if a.node is args[0])
        a, name, text, star = plan.args[k]
        if isinstance(args[0], (ast.List, ast.Tuple)) and text.strip()[:1] in "[(":
            text = text.strip()[1:-1]
        else:
            text = "*" + text
        plan.args[k] = (a, name, text, star)

    def _one_list(self, call: ast.Call, plan: "_Plan") -> None:
        """ModuleList(b for b in bs) -> CellList([b for b in bs]), (a, b) -> [a, b], ModuleList(layers) ->
        CellList(list(layers)):
        torch's container takes any iterable, MindSpore's only a list (a TypeError when it is built)."""
        given = call.args[0] if call.args and not isinstance(call.args[0], ast.Starred) else None
        if given is None or isinstance(given, (ast.List, ast.ListComp)):
            return
        k = next(i for i, (a, *_) in enumerate(plan.args) if a.node is given)
        a, name, text, star = plan.args[k]
        body = text.strip()
        if isinstance(given, ast.Tuple) and body[:1] == "(" and body[-1:] == ")":
            text = f"[{body[1:-1]}]"
        elif isinstance(given, ast.GeneratorExp) and body[:1] == "(" and body[-1:] == ")":
            # a generator that is the call's only argument spans the call's own parentheses
            own = self.src.start(given) == self.src.text.index("(", self.src.end(call.func))
            text = f"([{body[1:-1]}])" if own else f"[{body[1:-1]}]"
        else:
            text = f"list({body})"
        plan.args[k] = (a, name, text, star)

    def _number_lists_as_tuples(self, plan: "_Plan") -> None:
        """nn.Conv2d(1, 2, kernel_size=[3, 3]) -> nn.Conv2d(1, 2, kernel_size=(3, 3)): torch's layers take any
        sequence of numbers, MindSpore's a tuple (a list raises TypeError). recompat.runtime.torch_signature writes
        a list it is given as a literal, so it goes through here too."""
        for i, (a, name, text, star) in enumerate(plan.args):
            if name is not None and not star and isinstance(a.value, ast.List) \
                    and all(_is_number(e) for e in a.value.elts) and (tuple_text := _list_as_tuple(a.value, text)):
                plan.args[i] = (a, name, tuple_text, star)
        for key, text in plan.values.items():     # written by a converter (a pool's stride from its kernel_size)
            if not text.lstrip().startswith("["):
                continue
            try:
                node = ast.parse(text.strip(), mode="eval").body
            except SyntaxError:
                continue
            if isinstance(node, ast.List) and all(_is_number(e) for e in node.elts):
                plan.values[key] = _list_as_tuple(node, text) or text

    def _size_args(self, plan: "_Plan") -> None:
        """torch.zeros(2, 3) -> ops.zeros((2, 3)), torch.zeros(*shape) -> ops.zeros((*shape,)); one size or one
        sequence goes as it is, a list written out as a tuple, or made one (Tensor.tile refuses a list)."""
        sizes = [x for x in plan.args if x[0].name.startswith("*")]
        if self.to != "mindspore" or not sizes:
            return
        first, last = sizes[0][0].node, sizes[-1][0].node
        a, name, text, star = sizes[0]
        if len(sizes) == 1 and (tuple_text := _list_as_tuple(first, text)
                                or (_makes_list(first) and f"tuple({text.strip()})")):
            plan.args[plan.args.index(sizes[0])] = (a, name, tuple_text, star)
            return
        if len(sizes) > 1 or isinstance(first, ast.Starred):
            self.src.insert(self.src.start(first), "(")
            self.src.insert(self.src.end(last), ")" if len(sizes) > 1 else ",)")
        for x in sizes[1:]:
            plan.args[plan.args.index(x)] = (x[0], None, x[2], x[3])

    def _targets_in(self, text: str) -> str:
        """A value written from data (a default, a converter's dtype): the target framework's qualified names in it
        become placeholders, spelled with the others at the end."""
        def placeholder(m):
            self.targets.add(m.group(0))
            return target(m.group(0))
        return re.sub(rf"(?<![\w.\x00]){self.to}(?:\.[A-Za-z_]\w*)+", placeholder, text)

    def _size_to_shape(self, call: ast.Call, site: Site, qual: str) -> None:
        """t.size() -> t.shape, t.size(d) -> t.shape[d] (MindSpore's t.size is the element count)."""
        dims = [*call.args, *(k.value for k in call.keywords if k.arg == "dim")]
        if len(dims) > 1 or len(call.keywords) > len(dims) - len(call.args):
            raise _Manual("RC303", what="arguments other than one dim")
        receiver = self.src.render_node(call.func.value)
        dim = f"[{self.src.render_node(dims[0])}]" if dims else ""
        self.src.replace_node(call, f"{receiver}.shape{dim}")
        self.diag(site, "RC300", source=f"{qual}()", target=f".shape{dim and '[...]'}")

    # -- the end -----------------------------------------------------------------------------------

    def spell(self, taken: set[str]) -> set[str]:
        """Placeholders in the text the walk wrote -> names (`nn.Dense`; `mindspore.nn.Dense` where `nn` is
        taken); returns the imports they need."""
        imports: set[str] = set()
        root = self.to

        def name(m):
            qual = m.group(1)
            if qual.startswith(RUNTIME_MODULE + "."):     # recompat's own counterpart (UniformBetween)
                bare = qual[len(RUNTIME_MODULE) + 1:]
                if bare in taken:                          # the file binds the name to something else
                    imports.add(f"import {RUNTIME_MODULE}")
                    return qual
                self.runtime_names.add(bare)
                return bare
            for s in self.m.frameworks[self.to].spellings:
                if qual.startswith(s.prefix) and (s.name == root or s.name not in taken):
                    imports.add(s.statement)
                    return qual if s.name == root else s.name + "." + qual[len(s.prefix):]
            imports.add(f"import {root}")
            return qual

        self.src.map_edits(lambda text: _PLACEHOLDER.sub(name, text))
        imports |= {f"from {RUNTIME_MODULE} import {name}" for name in self.runtime_names}
        return imports




@dataclass
class _Plan:
    notes: list                                  # (code, fields) for the site
    args: list = field(default_factory=list)     # (arg, target name, value text, is *varargs)
    drop: list = field(default_factory=list)     # source arguments removed
    values: dict = field(default_factory=dict)   # target keyword -> text, appended
    passed: tuple | None = None                  # form initializer: (node, its text) of a tensor passed through as_tensor
    after: list = field(default_factory=list)    # (arg, the layer's tensor, torch.nn.init function, its other args)


def _self_binds(cls: ast.ClassDef) -> set[str]:
    """The attributes the class binds itself: its methods and class attributes, and `self.X = ...`."""
    bound = {n.attr for n in ast.walk(cls) if isinstance(n, ast.Attribute) and isinstance(n.ctx, ast.Store)
             and isinstance(n.value, ast.Name) and n.value.id == "self"}
    for stmt in cls.body:
        if isinstance(stmt, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
            bound.add(stmt.name)
        elif isinstance(stmt, (ast.Assign, ast.AnnAssign)):
            bound |= {t.id for t in (stmt.targets if isinstance(stmt, ast.Assign) else [stmt.target])
                      if isinstance(t, ast.Name)}
    return bound


def _list_as_tuple(node: ast.AST, text: str) -> str | None:
    """The text of a list display written as a tuple ([2] -> (2,)); None for anything else."""
    if not isinstance(node, ast.List) or not node.elts or not text.strip().startswith("["):
        return None
    inner = text.strip()[1:-1]
    return f"({inner.rstrip()},)" if len(node.elts) == 1 and not inner.rstrip().endswith(",") else f"({inner})"


def _makes_list(node: ast.AST) -> bool:
    """Whether an expression plainly gives a list: a list display or comprehension, a slice of one, list(...)."""
    if isinstance(node, ast.Subscript) and isinstance(node.slice, ast.Slice):
        return _makes_list(node.value)
    if isinstance(node, ast.Call) and isinstance(node.func, ast.Name) and node.func.id == "list":
        return True
    return isinstance(node, (ast.List, ast.ListComp))


def _is_number(node: ast.AST) -> bool:
    if isinstance(node, ast.UnaryOp) and isinstance(node.op, (ast.USub, ast.UAdd)):
        node = node.operand
    return isinstance(node, ast.Constant) and type(node.value) in (int, float)


def _binds(body: list[ast.stmt], name: str) -> bool:
    """Whether anything in these statements binds name again, or may in a scope of its own (an assignment, a for
    or with target, a def's or lambda's parameter, an except's or import's name, a match capture, a nested def or
    class of that name)."""
    for n in (n for stmt in body for n in ast.walk(stmt)):
        if isinstance(n, ast.Name) and n.id == name and not isinstance(n.ctx, ast.Load):
            return True
        if isinstance(n, (ast.FunctionDef, ast.AsyncFunctionDef, ast.Lambda)) and name in {
                a.arg for a in (*n.args.posonlyargs, *n.args.args, *n.args.kwonlyargs, n.args.vararg, n.args.kwarg)
                if a is not None}:
            return True
        if getattr(n, "name", None) == name and isinstance(n, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef,
                                                               ast.ExceptHandler, ast.MatchAs, ast.MatchStar)):
            return True
        if isinstance(n, ast.alias) and (n.asname or n.name.split(".")[0]) == name:
            return True
    return False


def bound_names(tree: ast.Module, frm: str) -> set[str]:
    """Names the file binds to anything but the source framework's modules (those imports may go)."""
    index = tree_index.index(tree)
    out = {node.id for node in index.of(ast.Name) if isinstance(node.ctx, ast.Store)}
    out |= {node.arg for node in index.of(ast.arg)}
    out |= {node.name for node in index.of(ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)}
    for node in index.of(ast.Import, ast.ImportFrom):
        for name, qual, alias in [*names.import_bindings(node), *names.star_bindings(node)]:
            full = alias.name if isinstance(node, ast.Import) else qual
            if not (full and (full == frm or full.startswith(frm + "."))):
                out.add(name)
    return out


def drop_source_imports(src: Source, tree: ast.Module, frm: str, kept: set[str]) -> None:
    """Remove the source framework's imports whose names no code left as it is uses any more (`kept`: the names
    the translated text still reads)."""
    for stmt in names.imports(tree):
        bindings = names.import_bindings(stmt)
        gone = [a for name, qual, a in bindings if name not in kept and (
            (alias_q := (a.name if isinstance(stmt, ast.Import) else qual)) and (alias_q == frm or alias_q.startswith(frm + ".")))]
        if len(gone) == len(stmt.names):
            edits.delete_statement(src, tree, stmt)
        elif gone:
            src.replace_node(stmt, edits.import_text(stmt, [src.render_node(a) for a in stmt.names if a not in gone]))


def add_imports(src: Source, tree: ast.Module, statements: set[str]) -> None:
    """Add the import lines the spelled names need, where the file's imports end; merge `from m import a`."""
    have = {(name, qual) for s in tree.body if isinstance(s, (ast.Import, ast.ImportFrom))
            for name, qual, alias in names.import_bindings(s)}
    froms: dict[str, list[str]] = {}
    lines = []
    for stmt in sorted(statements):
        node = ast.parse(stmt).body[0]
        if all((n, q) in have for n, q, _ in names.import_bindings(node)):
            continue
        if isinstance(node, ast.ImportFrom) and not node.names[0].asname:
            froms.setdefault(node.module, []).append(node.names[0].name)
        else:
            lines.append(stmt)
    lines += [f"from {m} import {', '.join(sorted(ns))}" for m, ns in sorted(froms.items())]
    if lines:
        src.insert(edits.after_imports(src, tree), "\n".join(lines) + "\n")


def _subtree_ids(roots: list[ast.AST]) -> set[int]:
    """The ids of the nodes under `roots`, the roots' own included."""
    found, todo = set(), list(roots)
    while todo:   # ast.walk's generators cost more than the set
        node = todo.pop()
        found.add(id(node))
        for field in tree_index.child_fields(node.__class__):
            value = getattr(node, field, None)
            if value.__class__ is list:
                todo += [v for v in value if isinstance(v, ast.AST)]
            elif isinstance(value, ast.AST):
                todo.append(value)
    return found


def _may_hold_none(call: ast.Call) -> bool:
    """Does the code show that the layers a container is given may hold None: a None in a list or tuple of them
    (`[None] * n` too), or a branch of a conditional that is None, in it or in a comprehension that makes them?"""
    given = call.args[0] if call.args else next((k.value for k in call.keywords if k.arg is not None), None)

    def none(node) -> bool:
        return isinstance(node, ast.Constant) and node.value is None or \
            isinstance(node, ast.IfExp) and (none(node.body) or none(node.orelse))

    if isinstance(given, ast.BinOp) and isinstance(given.op, ast.Mult):
        given = given.left if isinstance(given.left, (ast.List, ast.Tuple)) else given.right
    if isinstance(given, (ast.List, ast.Tuple)):
        return any(none(e) for e in given.elts)
    if isinstance(given, (ast.ListComp, ast.GeneratorExp)):
        return none(given.elt)
    return False
