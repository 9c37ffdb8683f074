"""The mapping data: every fact about an API and every diagnostic, read from the YAML files here.

The translator, the docs and the reports read these objects; nothing else states an API fact.
"""
from __future__ import annotations

import ast
import dataclasses
import functools
import hashlib
import json
import keyword
import os
import pickle
import re
import sys
from dataclasses import dataclass, field
from pathlib import Path

import recompat
from recompat.constants import OTHER

HERE = Path(__file__).parent
CORE_RULES = ("api_class", "api_function", "api_value", "tensor_method", "tensor_attribute",   # the core API set's rules
              "method_name", "model_method")
TRAINING_RULES = ("optimizer", "loss", "lr_schedule", "grad_clip")   # training.yaml: compare_training's pieces
MODEL_RULES = CORE_RULES + TRAINING_RULES   # what translate --scope model rewrites: the core API set and training pairs


class MappingError(Exception):
    """A mapping file that does not match the schema; the message names the file and the key."""


@dataclass(frozen=True)
class Param:
    torch: str | None
    mindspore: str | None
    action: str                       # keep | rename | drop
    note: dict
    code: str | None = None
    why: str | None = None
    values: dict = field(default_factory=dict)
    torch_default: str | None = None
    mindspore_default: str | None = None
    when_reentrant: dict | None = None      # the decision when MindSpore's reentrant form is used
    when_non_reentrant: dict | None = None  # ... and when its non-reentrant form is used
    when_dynamic: dict | None = None        # ... and when use_reentrant is decided at run time
    convert: str | None = None              # core API set: how the value changes on the way (translator/convert.py)
    fill: bool = True                       # core API set: write a left-out source default when the defaults differ
    parallel: bool = False                  # a MindSpore auto-parallel option of Cell.recompute (schema.json)
    role: str | None = None                 # what it is to the checkpoint rules: reentrancy, rng_state, ... (schema)
    compare: dict | None = None             # a layer setting transfer_weights compares (schema.json); {} = plainly
    mindspore_aliases: tuple[str, ...] = ()   # older keyword names MindSpore takes for it (Tensor.mean's axis=)
    fills: str | None = None                # a MindSpore layer's *_init: the torch layer's tensor it sets (schema)

    @property
    def codes(self) -> tuple[tuple[str, str], ...]:
        """(key below the param, code) for every diagnostic code the param names."""
        found = [("code", self.code)] + [(f"{w}/code", (getattr(self, w) or {}).get("code"))
                                         for w in ("when_reentrant", "when_non_reentrant", "when_dynamic")]
        return tuple((k, c) for k, c in found if c)


@dataclass(frozen=True)
class TensorPair:
    """One parameter or buffer of a layer pair, named relative to the layer (dotted below it)."""
    torch: str | None                 # None: MindSpore's tensor has no torch counterpart
    mindspore: str | None             # None: torch's tensor has no MindSpore counterpart
    layout: dict = field(default_factory=dict)   # {"insert_axis": n}: MindSpore's array has a length-1 axis at n
    why: str | None = None            # why a side has no counterpart

    @property
    def insert_axis(self) -> int | None:
        return self.layout.get("insert_axis")


@dataclass(frozen=True)
class Entry:
    id: str
    rule: str
    torch: dict
    mindspore: dict
    summary: dict
    params: tuple[Param, ...]
    support_code: str | None = None
    partial_support_code: str | None = None   # what functools.partial(<this API>, ...) becomes (a function it adds)
    source: str = "torch"             # the framework translated from; params list that side's parameters
    form: str | None = None           # core API set: how the call's shape changes (list_args, size_args, ...)
    proven: bool = False              # its paired example passed (examples/<id>/output.txt): translated only then
    tensors: tuple[TensorPair, ...] | None = None   # a layer pair: its parameters and buffers (None: not a layer)
    attributes: tuple[TensorPair, ...] = ()   # a layer pair's other attributes kept under other names, or not
    in_subclass_of: dict | None = None   # model_method: {"classes", "runtime", "why"}: recompat.runtime's there
    draws: str | None = None          # the distribution it draws from: its example is draw(), proven by it
    holding_none: dict | None = None  # api_class: {"mindspore", "why"}: the target where the code shows None in it
    fallback_for: str | None = None   # the entry of the same torch API it stands in for where that one cannot carry a call
    runtime: str | None = None        # grad_clip: what translation writes, with torch's arguments (recompat.runtime's)
    steps_optimizer: bool = False     # api_class: its step(optimizer) steps that optimizer (a GradScaler)
    table_row: str | None = None      # made from the mapping table's verified row (table_entries): its evidence
    domain: tuple[tuple[str, str], ...] = ()   # the parts of its domain its counterpart differs on (DOMAIN_FILE)

    @property
    def example_kind(self) -> str:
        """What its paired example defines: "model" (Example and INPUTS, compared by compare()), "tensor" (SHAPE and
        init(tensor), proven by what it writes: TENSOR_FORMS) or "draw" (draw(), proven by the distribution)."""
        return "draw" if self.draws else "tensor" if self.form in TENSOR_FORMS else "model"

    @property
    def torch_names(self) -> tuple[str, ...]:
        """Every qualified name under which torch exposes this API."""
        return (self.torch["api"], *self.torch.get("aliases", ()))

    @property
    def source_names(self) -> tuple[str, ...]:
        """Every qualified name of the API this entry translates from."""
        side = getattr(self, self.source)
        return (side["api"], *side.get("aliases", ()))

    def role(self, role: str) -> Param | None:
        """The param that plays `role` (schema.json: param/role), if any."""
        return next((p for p in self.params if p.role == role), None)

    def position(self, param: Param, side: str = "torch") -> int | None:
        """Where `param` stands among the positional parameters of `side`'s recorded signature; None if not there."""
        a = signature_arguments(getattr(self, side)["signature"])
        names = [x.arg for x in (a.posonlyargs + a.args)] if a else []
        name = getattr(param, side)
        return names.index(name) if name in names else None

    def written(self, side: str) -> str:
        """The name translated code writes for `side`'s API."""
        return getattr(self, side).get("written", getattr(self, side)["api"])

    def names(self, side: str) -> tuple[str, ...]:
        """Every qualified name under which `side` ("torch" or "mindspore") exposes this API."""
        found = self._names.get(side)
        if found is None:
            found = self._names[side] = (getattr(self, side)["api"], *getattr(self, side).get("aliases", ()))
        return found

    @functools.cached_property
    def _names(self) -> dict[str, tuple[str, ...]]:   # side -> names(side), as asked
        return {}

    def translates_from(self, side: str) -> bool:
        return self.source in (side, "both")

    def param(self, name: str, side: str | None = None) -> Param | None:
        """The param for a parameter of `side` (default: the source side; source: both entries must name one).
        The first row naming it wins (MindSpore's Dropout keep_prob and p both pair with torch's p)."""
        return self._params_named[side or self.source].get(name)

    @functools.cached_property
    def _params_named(self) -> dict[str, dict[str, Param]]:
        named: dict[str, dict[str, Param]] = {"torch": {}, "mindspore": {}}
        for p in self.params:   # the first row naming one wins
            for side, of_side in named.items():
                of_side.setdefault(getattr(p, side), p)
        return named

    def keyword(self, name: str, side: str) -> str:
        """The parameter a keyword of `side` names: itself, or the one it is an older name of (`axis` -> `dim`)."""
        if side == "mindspore":
            return next((p.mindspore for p in self.params if name in p.mindspore_aliases and p.mindspore), name)
        return name

    @property
    def settings(self) -> tuple[Param, ...]:
        """A layer pair's settings that change outputs even with equal weights: the params transfer_weights
        compares on every paired layer (`compare`)."""
        return tuple(p for p in self.params if p.compare is not None)

    def mindspore_tensor(self, torch_name: str) -> str | None:
        """A layer pair's MindSpore tensor paired with torch_name; torch_name itself when `tensors` does not list it."""
        t = self._paired(torch_name, self.tensors or ())
        return torch_name if t is None else t.mindspore

    def mindspore_attribute(self, torch_name: str) -> str | None:
        """Where a layer pair's MindSpore layer keeps what torch's keeps as torch_name (a tensor, or another
        attribute); None where it keeps no counterpart."""
        t = self._paired(torch_name, (*(self.tensors or ()), *self.attributes))
        return torch_name if t is None else t.mindspore

    def attribute_why(self, torch_name: str) -> str | None:
        """Why the MindSpore layer keeps no counterpart of torch_name, where `tensors` or `attributes` says."""
        t = self._paired(torch_name, (*(self.tensors or ()), *self.attributes))
        return None if t is None else t.why

    @staticmethod
    def _paired(torch_name: str, pairs) -> TensorPair | None:
        return next((t for t in pairs if t.torch == torch_name), None)


@dataclass(frozen=True)
class Wrapper:
    """A torch module that holds another under `attribute`, adding that prefix to every name below it."""
    cls: str                          # qualified class name ("class" in the YAML)
    attribute: str
    note: dict


@dataclass(frozen=True)
class Spelling:
    """A qualified name under `prefix` is written `name.<rest>`, with `statement` binding `name`."""
    prefix: str
    name: str
    statement: str


@dataclass(frozen=True)
class Framework:
    """frameworks.yaml: one framework's facts as a whole (see the file for each)."""
    name: str
    model_bases: tuple[str, ...]
    layer_modules: tuple[str, ...]
    operator_modules: tuple[str, ...]
    sequences: frozenset[str]         # containers of layers built from a list of them (SequentialCell, ModuleList)
    mappings: frozenset[str]          # containers of layers by key (CellDict, ModuleDict)
    spellings: tuple[Spelling, ...]   # longest prefix first
    tensor_class: str = ""                            # its qualified name
    tensor_types: frozenset[str] = frozenset()        # typed tensor classes (torch.LongTensor): in an annotation, the Tensor
    tensor_attributes: frozenset[str] = frozenset()   # its public data attributes
    generic_attributes: frozenset[str] = frozenset()  # ... that other objects have too: a tensor's only in a model
    model_methods: frozenset[str] = frozenset()       # the public methods of its model base class
    tensor_methods: frozenset[str] = frozenset()      # its Tensor's public methods (but those a built-in type has)
    reexports: tuple[tuple[str, str], ...] = ()       # (package, the package re-exporting its public names)
    mode_dependent_layers: frozenset[str] = frozenset()   # layer classes that differ in training and evaluation mode
    same_tensor: frozenset[str] = frozenset()         # functions that return the tensor they are given (as_tensor)
    fresh_tensor: frozenset[str] = frozenset()        # functions that make a new tensor nothing else holds (zeros)
    returns_self: frozenset[str] = frozenset()        # methods of its layers and operators that return their object
    one_operator_layers: tuple[tuple[str, str], ...] = ()   # (layer class, the attribute of the one operator it runs)
    children: tuple[tuple[str, str], ...] = ()   # (how a layer gives its child layers, in what shape)

    @property
    def containers(self) -> frozenset[str]:
        return self.sequences | self.mappings

    @functools.cached_property
    def _reexporting(self) -> tuple[str, ...]:
        return tuple(package + "." for package, _ in self.reexports)

    def public_name(self, qual: str) -> str:
        """A name under a re-exporting package read as the public one of the same last name
        (torch.nn.modules.activation.ReLU -> torch.nn.ReLU, mindspore.common.dtype.float32 -> mindspore.float32);
        any other name as it is."""
        if not qual.startswith(self._reexporting):   # most names: one test, not one per package
            return qual
        for prefix, (_, public) in zip(self._reexporting, self.reexports):
            if qual.startswith(prefix):
                return f"{public}.{qual.rsplit('.', 1)[1]}"
        return qual

    def is_model_class(self, qual: str) -> bool:
        """Whether a qualified name is its model base class or a layer class (a capitalised name of a layer
        module): what a model class derives from."""
        return qual in self.model_bases or (qual.startswith(self.layer_modules)
                                            and qual.rsplit(".", 1)[1][:1].isupper())


@dataclass(frozen=True)
class ReportedApi:
    """reported.yaml: a checkpoint or recompute name no entry translates; its uses are reported, not rewritten."""

    api: str                  # covers everything under it
    framework: str            # the side it belongs to
    library: str
    kind: str                 # module | class | enum | function | method (matched by attribute name)
    what: dict                # en / zh
    instead: dict             # en / zh: what to write on the other side
    aliases: tuple[str, ...] = ()
    settings_only: bool = False   # holds settings that its package's own code acts on: carried over with it
    runtime: str | None = None    # training.yaml's loop: the recompat.runtime function translation writes instead
    part: str | None = None       # training.yaml's loop, MindSpore's: differentiate | order (translator/steps_to_torch.py)

    @property
    def names(self) -> tuple[str, ...]:
        return (self.api, *self.aliases)


@dataclass(frozen=True)
class Marker:
    """markers.yaml: a name that tells a compiler (torch's, MindSpore's) something and changes nothing in eager
    execution on the other side."""

    api: str
    becomes: str              # identity | false | subscript | isinstance
    why: dict                 # en / zh
    argument: int = 0         # identity: the argument a call gives
    takes: str = "function"   # what it takes in its probe
    framework: str = "torch"  # whose compiler it tells


# Forms whose paired example writes a tensor (init(tensor) and SHAPE, compat.examples.run_init_example), no model.
TENSOR_FORMS = ("initializer", "assigned")


@dataclass(frozen=True)
class LibraryModule:
    """libraries.yaml: a third-party library's torch module, the MindSpore module that stands for it, and the names
    that carry over."""

    torch: str
    mindspore: str
    names: tuple[str, ...]
    what: dict                # en / zh


@dataclass(frozen=True)
class MindSporeOp:
    """selective.yaml: one way a MindSpore op stands for a torch op, as MsDispatchMode sees it (`func.name`)."""

    op: str
    rank: int | str | None = None     # 2 | ">2": the first tensor argument's dimensions
    none: int | None = None           # this argument is None
    given: int | None = None          # this argument is a tensor
    then: str | None = None           # one torch op is two MindSpore ops: `then` runs next, on this op's output


@dataclass(frozen=True)
class SelectiveOp:
    """selective.yaml: a torch op a selective-checkpointing policy names, and the MindSpore ops that stand for it."""

    torch: str                        # aten.mm.default
    mindspore: tuple[MindSporeOp, ...]
    probes: tuple[dict, ...] = ()     # {torch: code, mindspore: code}
    unprobed: str | None = None       # why no probe runs on one CPU


@dataclass(frozen=True)
class Selective:
    """selective.yaml as a whole."""

    ops: tuple[SelectiveOp, ...] = ()
    composite: dict = field(default_factory=dict)   # torch op -> the torch ops dispatch sees instead
    ignored: dict = field(default_factory=dict)     # MindSpore op -> torch op: never cached nor counted
    runtime: dict = field(default_factory=dict)     # module, torch_ops, ops: where translated code finds it

    def op(self, torch_name: str) -> SelectiveOp | None:
        return next((o for o in self.ops if o.torch == torch_name), None)


@dataclass(frozen=True, eq=False)   # hashed by identity: derived data is cached per Mappings
class Mappings:
    entries: tuple[Entry, ...]
    diagnostics: dict                 # code -> {"status", "message"}
    layers: tuple[Entry, ...] = ()    # parameters.yaml: layer pairs with no entry yet (weight transfer only)
    wrappers: tuple[Wrapper, ...] = ()  # parameters.yaml: torch modules whose prefix transfer_weights drops
    functional_dropout: frozenset = frozenset()   # dropout functions (RC150)
    frameworks: dict = field(default_factory=dict)  # "torch" / "mindspore" -> Framework
    reported: tuple[ReportedApi, ...] = ()          # reported.yaml
    training: tuple[Entry, ...] = ()                # training.yaml: optimizers, losses, schedules, clipping
    loop: tuple[ReportedApi, ...] = ()              # training.yaml: the loop's methods, reported by --scope model
    markers: tuple[Marker, ...] = ()                # markers.yaml: torch's compiler markers
    modules: tuple[LibraryModule, ...] = ()         # libraries.yaml: third-party libraries' per-framework modules
    selective: Selective = Selective()              # selective.yaml: the ops of selective checkpointing
    table: tuple[Entry, ...] = ()                   # table/verdicts.json: the agreeing rows as entries (table_entries)

    def library_pairs(self, side: str, module: str) -> tuple[LibraryModule, ...]:
        """The libraries.yaml pairs whose `side` module is `module` (several MindSpore modules may stand for one)."""
        return self._library_pairs[side].get(module, ())

    @functools.cached_property
    def _library_pairs(self) -> dict[str, dict[str, tuple[LibraryModule, ...]]]:
        out: dict[str, dict[str, tuple[LibraryModule, ...]]] = {"torch": {}, "mindspore": {}}
        for lm in self.modules:
            for side in out:
                out[side][getattr(lm, side)] = (*out[side].get(getattr(lm, side), ()), lm)
        return out

    def reported_api(self, side: str, qualname: str) -> ReportedApi | None:
        """The reported name of `side` that covers `qualname` most closely (not for kind method); None if none."""
        parts = qualname.split(".")
        names = self._reported_names[side]
        return next((names[p] for p in (".".join(parts[:k]) for k in range(len(parts), 0, -1)) if p in names), None)

    @functools.cached_property
    def drawing(self) -> dict[str, dict[str, str]]:
        """Side ("torch", "mindspore") -> {each name of an entry that draws random values: the distribution it
        draws from} (the entries' `draws`)."""
        found: dict[str, dict[str, str]] = {"torch": {}, "mindspore": {}}
        for entry in self.entries:
            if entry.draws:
                for side, names in found.items():
                    names.update(dict.fromkeys(entry.names(side), entry.draws))
        return found

    def loop_method(self, side: str, attribute: str) -> ReportedApi | None:
        """training.yaml's loop method of `side` named `attribute` (matched on any object); None if none."""
        return self._loop_methods.get((side, attribute))

    @functools.cached_property
    def _loop_methods(self) -> dict[tuple[str, str], ReportedApi]:
        found: dict[tuple[str, str], ReportedApi] = {}
        for r in self.loop:   # the first one listed wins
            if r.kind == "method":
                found.setdefault((r.framework, r.api.rsplit(".", 1)[1]), r)
        return found

    def step_functions(self, part: str) -> dict[str, ReportedApi]:
        """training.yaml's loop functions of MindSpore's step that are `part` (differentiate, order), by name."""
        return {n: r for r in self.loop if r.part == part for n in r.names}

    def reported_method(self, side: str, attribute: str) -> ReportedApi | None:
        """The reported method of `side` named `attribute` (matched on any object); None if none."""
        return self._reported_methods[side].get(attribute)

    @functools.cached_property
    def _reported_names(self) -> dict[str, dict[str, ReportedApi]]:
        return {side: {n: r for r in self.reported if r.framework == side and r.kind != "method" for n in r.names}
                for side in ("torch", "mindspore")}

    @functools.cached_property
    def _reported_methods(self) -> dict[str, dict[str, ReportedApi]]:
        return {side: {n.rsplit(".", 1)[1]: r for r in self.reported if r.framework == side and r.kind == "method"
                       for n in r.names} for side in ("torch", "mindspore")}

    @functools.cached_property
    def by_torch_name(self) -> dict[str, Entry]:
        """torch -> MindSpore entries by every name of their torch API."""
        return {name: e for e in self.entries if e.source == "torch" and e.rule not in CORE_RULES
                for name in e.torch_names}

    @functools.cached_property
    def by_mindspore_name(self) -> dict[str, Entry]:
        """MindSpore -> torch entries by every name of their MindSpore API."""
        return {name: e for e in self.entries if e.source == "mindspore" and e.rule not in CORE_RULES
                for name in e.source_names}

    @functools.cached_property
    def model_scope(self) -> dict[str, dict[str, Entry]]:
        """What translate --scope model translates (the core API set and the training pairs) by side translated
        from, then by every name on that side."""
        return {side: {name: e for e in (*self.table, *self.entries, *self.training) if e.rule in MODEL_RULES
                       and e.translates_from(side) and not e.fallback_for for name in e.names(side)}
                for side in ("torch", "mindspore")}

    def fallback(self, entry: Entry) -> Entry | None:
        """The entry that stands in for `entry` where it cannot carry a call (its `fallback_for`), if any."""
        return self._fallbacks.get(entry.id)

    @functools.cached_property
    def _fallbacks(self) -> dict[str, Entry]:
        return {e.fallback_for: e for e in self.entries if e.fallback_for}

    def entry(self, entry_id: str) -> Entry:
        return next(e for e in (*self.entries, *self.training) if e.id == entry_id)

    def training_pair(self, rule: str, torch_api: str) -> Entry | None:
        """training.yaml's entry of `rule` for a torch class or function, by any of its torch names."""
        return next((e for e in self.training if e.rule == rule and torch_api in e.torch_names), None)

    @functools.cached_property
    def layer_pairs(self) -> tuple[Entry, ...]:
        """What transfer_weights pairs: every entry with `tensors`, then parameters.yaml's layers."""
        return tuple(e for e in self.entries if e.tensors is not None) + self.layers

    def layer_pair(self, pair_id: str) -> Entry:
        return next(e for e in self.layer_pairs if e.id == pair_id)

    @functools.cached_property
    def containers(self) -> frozenset[str]:
        """Class names of containers of layers, in either framework."""
        return frozenset().union(*(f.containers for f in self.frameworks.values()))

    def own_tensor_methods(self, side: str) -> frozenset[str]:
        """The methods of `side`'s Tensor that the other framework's Tensor lacks (frameworks.yaml)."""
        return self.frameworks[side].tensor_methods - self.frameworks[OTHER[side]].tensor_methods

    @functools.cached_property
    def shared_tensor_methods(self) -> frozenset[str]:
        """The methods both frameworks' Tensor classes have under one name (frameworks.yaml)."""
        return self.frameworks["torch"].tensor_methods & self.frameworks["mindspore"].tensor_methods


@functools.lru_cache(maxsize=4096)   # the passes ask about the same few defaults again and again
def same(a: str | None, b: str | None) -> bool:
    """Two Python expressions that mean the same constant (1e-05 == 0.00001, 0 == 0.0, 'x' == "x")."""
    if a is None or b is None:
        return a is b
    try:
        x, y = ast.parse(a.strip(), mode="eval"), ast.parse(b.strip(), mode="eval")
    except SyntaxError:
        return a.strip() == b.strip()
    if ast.dump(x) == ast.dump(y):
        return True
    try:   # 0 and 0.0 are the same setting; True and 1 are not
        u, v = ast.literal_eval(x), ast.literal_eval(y)
    except (ValueError, TypeError, SyntaxError, MemoryError, RecursionError):
        return False
    return all(type(w) in (int, float) for w in (u, v)) and u == v


def _validate(data, path: Path):
    import jsonschema  # imported here: only loading pays for it

    schema = json.loads((HERE / "schema.json").read_text(encoding="utf-8"))
    errors = sorted(jsonschema.Draft202012Validator(schema).iter_errors(data), key=lambda e: list(e.path))
    if errors:
        lines = [f"  at {'/'.join(map(str, e.path)) or '(top)'}: {e.message}" for e in errors]
        raise MappingError(f"{path}: does not match mappings/schema.json:\n" + "\n".join(lines))


def _tensors(raw: list, where: str) -> tuple[TensorPair, ...]:
    tensors = tuple(TensorPair(**t) for t in raw)
    for side in ("torch", "mindspore"):
        names = [getattr(t, side) for t in tensors if getattr(t, side) is not None]
        twice = sorted({n for n in names if names.count(n) > 1})
        if twice:
            raise MappingError(f"{where}/tensors: {side} name(s) paired twice: {', '.join(twice)}")
    return tensors


def _check_settings(e: Entry, where: str) -> None:
    """A compared param names what it needs: both sides (or `read` for the MindSpore one), and MindSpore params of
    the entry in `kept` and `arguments`."""
    names = {p.mindspore for p in e.params if p.mindspore}
    for k, p in enumerate(e.params):
        c = p.compare
        if c is None:
            continue
        at = f"{where}/params/{k}/compare ({e.id}, torch parameter {p.torch})"
        if e.tensors is None:
            raise MappingError(f"{at}: only a layer pair (an entry with tensors) has settings to compare")
        if p.torch is None or (p.mindspore is None and "read" not in c):
            raise MappingError(f"{at}: a compared setting needs a torch name and a MindSpore one (or read)")
        kept = c.get("kept")
        if kept not in (None, "torch", "trailing") and kept not in names:
            raise MappingError(f"{at}: kept: {kept} is neither torch, trailing nor a MindSpore parameter of the entry")
        unknown = sorted(set(c.get("arguments", ())) - names)
        if unknown:
            raise MappingError(f"{at}: arguments: not MindSpore parameters of the entry: {', '.join(unknown)}")


def _layer(raw: dict, path: Path, index: int) -> Entry:
    """A parameters.yaml layer pair (no entry yet): an Entry that only weight transfer reads. Its params are
    settings alone, their defaults written out (there is no recorded signature to derive them from)."""
    where = f"{path}: layers/{index}"
    params = tuple(Param(action="keep", note={}, **{**p, "compare": _compare(p.get("compare"))})
                   for p in raw["params"])
    e = Entry(id=raw["id"], rule=None, torch=raw["torch"], mindspore=raw["mindspore"], summary=raw["note"],
              params=params, source="both", tensors=_tensors(raw["tensors"], f"{where} ({raw['id']})"))
    _check_settings(e, where)
    return e


def _compare(raw) -> dict | None:
    """`compare: true` is `compare: {}`."""
    return None if raw is None or raw is False else ({} if raw is True else dict(raw))


def _framework(name: str, raw: dict) -> Framework:
    return Framework(name=name, model_bases=tuple(raw["model_bases"]), layer_modules=tuple(raw["layer_modules"]),
                     operator_modules=tuple(raw["operator_modules"]),
                     sequences=frozenset(raw["containers"]["sequence"]),
                     mappings=frozenset(raw["containers"]["mapping"]),
                     spellings=tuple(Spelling(s["prefix"], s["name"], s["import"]) for s in raw["spellings"]),
                     tensor_class=raw["tensor_class"], tensor_attributes=frozenset(raw["tensor_attributes"]),
                     tensor_types=frozenset(raw.get("tensor_types", ())),
                     generic_attributes=frozenset(raw.get("generic_attributes", ())),
                     model_methods=frozenset(raw.get("model_methods", ())),
                     tensor_methods=frozenset(raw.get("tensor_methods", ())),
                     reexports=tuple(raw.get("reexports", {}).items()),
                     mode_dependent_layers=frozenset(raw.get("mode_dependent_layers", ())),
                     same_tensor=frozenset(raw.get("same_tensor", ())),
                     fresh_tensor=frozenset(raw.get("fresh_tensor", ())),
                     returns_self=frozenset(raw.get("returns_self", ())),
                     one_operator_layers=tuple(raw.get("one_operator_layers", {}).items()),
                     children=tuple(raw.get("children", {}).items()))


# A parameter named by a Python keyword (torch.Tensor.uniform_'s `from`, only ever passed by position): entries
# name it with a trailing underscore, as Python code does.
_KEYWORD_PARAMETER = re.compile(r"([(,]\s*\**)(" + "|".join(k for k in keyword.kwlist if k not in ("None", "True", "False"))
                                + r")(?=\s*[=,):])")


@functools.lru_cache(maxsize=None)
def signature_arguments(signature: str) -> ast.arguments | None:
    """The parameters of a recorded signature (`Linear(in_features, out_features, bias=True, ...)`), parsed as a
    def's; an attribute's signature is its bare name (`shape`): no parameters. None when it cannot be read."""
    if signature.isidentifier():
        return ast.parse("def f(): pass").body[0].args
    signature = _KEYWORD_PARAMETER.sub(r"\1\2_", signature)   # torch's uniform_(from=0, ...): read as from_
    head = signature.find("(")
    for text in (signature[head:], signature[head:signature.rfind(")") + 1]) if head >= 0 else ():
        try:   # the second try drops a return annotation Python cannot read (`-> Tensor`)
            return ast.parse(f"def f{text}: pass").body[0].args
        except SyntaxError:
            continue
    return None


def signature_defaults(signature: str) -> dict[str, str] | None:
    """Each parameter's default in a recorded signature, as source text (`ast.unparse`), by name; a parameter
    with none (*args and **kwargs among them) is absent. None when the signature cannot be read."""
    a = signature_arguments(signature)
    if a is None:
        return None
    positional = a.posonlyargs + a.args
    pairs = [*zip(positional[len(positional) - len(a.defaults):], a.defaults), *zip(a.kwonlyargs, a.kw_defaults)]
    return {x.arg: ast.unparse(d) for x, d in pairs if d is not None}


def _params(raw: dict, where: str) -> tuple[Param, ...]:
    """An entry's params, each side's default derived from that side's recorded signature where the YAML gives
    none (an explicit one is an override: see param/torch_default in schema.json). A YAML default that means the
    same as the signature's (same) is refused, so that no default is written twice."""

    defaults = {}
    for side in ("torch", "mindspore"):
        defaults[side] = signature_defaults(raw[side]["signature"])
        if defaults[side] is None:
            raise MappingError(f"{where}/{side}/signature ({raw['id']}): cannot be read as a call head")
    out = []
    for k, p in enumerate(raw.pop("params")):
        p = dict(p)   # not in place: YAML aliases share one params list between entries
        for side in ("torch", "mindspore"):
            key, derived = f"{side}_default", defaults[side].get(p[side] or "")
            if key not in p:
                p[key] = derived
            elif derived is not None and same(p[key], derived):
                raise MappingError(f"{where}/params/{k}/{key} ({raw['id']}, {side} parameter {p[side]}): "
                                   f"{p[key]} repeats the default of the recorded {side} signature; leave it out "
                                   "(it is derived from the signature)")
        p["compare"] = _compare(p.get("compare"))
        p["mindspore_aliases"] = tuple(p.get("mindspore_aliases", ()))
        out.append(Param(**p))
    return tuple(out)


def load(folder: Path = HERE) -> Mappings:
    """Read and validate every *.yaml file in `folder`.

    A load that passed is kept in the user's cache (cache_dir()) under a hash of everything it read (cache_key()),
    so the next process unpickles it instead of parsing and validating again. A cache file that cannot be read,
    does not unpickle, or holds another key is ignored and written anew; a cache folder that cannot be written
    means no cache. RECOMPAT_NO_CACHE=1 turns the cache off."""
    folder = Path(folder)
    texts = [(path, path.read_bytes()) for path in sorted(folder.glob("*.yaml"))]
    for recorded in (TABLE_VERDICTS, DOMAIN_FILE):
        if (folder / recorded).is_file():
            texts.append((folder / recorded, (folder / recorded).read_bytes()))
    where = cache_dir()
    key = cache_key(folder, texts) if where is not None else None
    if key is not None:
        cached = _read_cache(where / _cache_name(key), key, folder)
        if cached is not None:
            return cached
    maps = _load(folder, texts)
    if key is not None:
        _write_cache(where, key, maps)
    return maps


CACHE_FORMAT = 13                     # bump when what a cache file holds changes shape
_CACHE_KEEP = 8                       # cache files kept in the folder (the newest), other keys' included


def cache_dir() -> Path | None:
    """Where load() keeps its cache: $RECOMPAT_CACHE_DIR, else $XDG_CACHE_HOME/recompat, else ~/.cache/recompat;
    None when RECOMPAT_NO_CACHE is set (to anything but 0) or no home folder is known."""
    if os.environ.get("RECOMPAT_NO_CACHE", "") not in ("", "0"):
        return None
    if os.environ.get("RECOMPAT_CACHE_DIR"):
        return Path(os.environ["RECOMPAT_CACHE_DIR"])
    xdg = os.environ.get("XDG_CACHE_HOME", "")
    if os.path.isabs(xdg):            # the XDG spec: a relative path is invalid and ignored
        return Path(xdg) / "recompat"
    try:
        return Path.home() / ".cache" / "recompat"
    except (RuntimeError, KeyError, OSError):
        return None


def cache_key(folder: Path, texts: list[tuple[Path, bytes]]) -> str | None:
    """sha256 of every input of load(): the YAML files (name and bytes), the schema, this module's own source (the
    dataclasses and the derivations), the folder, recompat's and Python's versions, and where PyYAML and jsonschema
    are installed (path, size and time of their __init__.py: an upgrade changes them). Which examples
    are proven (examples/<id>/output.txt) is checked on each read instead (_read_cache). None: an input cannot be
    read, so no cache."""
    h = hashlib.sha256()

    def put(*parts) -> None:
        for part in parts:
            data = part if isinstance(part, bytes) else str(part).encode("utf-8", "surrogateescape")
            h.update(len(data).to_bytes(8, "little") + data)

    try:
        put(CACHE_FORMAT, recompat.__version__, sys.version, sys.implementation.cache_tag, pickle.HIGHEST_PROTOCOL,
            folder.resolve(), Path(__file__).read_bytes(), (HERE / "schema.json").read_bytes())
        import importlib.util   # PyYAML and jsonschema as installed: another could read or judge the text otherwise

        for name in ("yaml", "jsonschema"):
            spec = importlib.util.find_spec(name)
            origin = os.stat(spec.origin) if spec and spec.origin else None
            put(name, spec and spec.origin, origin and (origin.st_size, origin.st_mtime_ns))
        put(len(texts))
        for path, data in texts:
            put(path.name, data)
    except (OSError, ValueError, ImportError):
        return None
    return h.hexdigest()


def _cache_name(key: str) -> str:
    return f"mappings-{key}.pickle"


class _Unpickler(pickle.Unpickler):
    """Only this module's dataclasses come out of a cache file (built without calling any code of theirs): no
    other class, no function, nothing run."""

    def find_class(self, module, name):
        found = globals().get(name) if module == __name__ else None
        if isinstance(found, type) and dataclasses.is_dataclass(found):
            return found
        raise pickle.UnpicklingError(f"{module}.{name} is not a mapping dataclass")


def _read_cache(path: Path, key: str, folder: Path) -> Mappings | None:
    """The Mappings a cache file holds, if it is ours, whole, for `key`, and its entries are proven as the
    examples on disk say now; None otherwise (never an error)."""
    try:
        with open(path, "rb") as f:
            st = os.fstat(f.fileno())
            if hasattr(os, "getuid") and (st.st_uid != os.getuid() or st.st_mode & 0o022):
                return None           # another user's, or writable by others: not ours to unpickle
            import io

            held = _Unpickler(io.BytesIO(f.read())).load()
        if not (isinstance(held, tuple) and len(held) == 3 and held[0] == CACHE_FORMAT and held[1] == key
                and isinstance(held[2], Mappings)):
            return None
        maps = held[2]
        if any(e.proven != (folder / "examples" / e.id / "output.txt").is_file() for e in maps.entries):
            return None               # an example proven or unproven since
        return maps
    except Exception:                 # missing, unreadable, truncated, corrupt: load() reads the YAML instead
        return None


def _write_cache(where: Path, key: str, maps: Mappings) -> None:
    """Keep `maps` for the next process; any failure means no cache (never an error). Keeps the _CACHE_KEEP newest
    cache files."""
    try:
        from recompat._files import write_atomic

        data = pickle.dumps((CACHE_FORMAT, key, maps), protocol=pickle.HIGHEST_PROTOCOL)
        where.mkdir(mode=0o700, parents=True, exist_ok=True)
        write_atomic(where / _cache_name(key), data, mode=0o600)
        kept = sorted(where.glob(_cache_name("*")), key=lambda p: p.stat().st_mtime_ns, reverse=True)
        for old in kept[_CACHE_KEEP:]:
            old.unlink(missing_ok=True)
    except Exception:
        pass


def _load(folder: Path, texts: list[tuple[Path, bytes]]) -> Mappings:
    """load() without the cache: parse (libyaml where PyYAML has it), validate and cross-check `texts`, the
    *.yaml files of `folder` and their bytes."""
    import yaml

    loader = getattr(yaml, "CSafeLoader", yaml.SafeLoader)
    entries, training, diagnostics = [], [], {}
    where: dict[int, str] = {}        # id(entry) -> "file: entries/i", for the cross-checks' messages
    layers, wrappers, dropout, frameworks, reported, loop, markers, modules = [], [], set(), {}, {}, [], {}, {}
    selective_ops, composite, ignored, runtime = {}, {}, {}, {}
    table_rows, domains = [], {}
    for path, text in texts:
        if path.name == DOMAIN_FILE.name:
            domains = _domains(path, text)
            continue
        if path.suffix == ".json":   # TABLE_VERDICTS
            try:
                table_rows = json.loads(text.decode("utf-8"))["rows"]
            except (ValueError, KeyError, TypeError) as exc:
                raise MappingError(f"{path}: cannot read the recorded verdicts ({exc}): run `recompat verify-table "
                                   "--record` to write them again") from None
            continue
        try:
            text = text.decode("utf-8").replace("\r\n", "\n").replace("\r", "\n")   # as read_text() reads
            data = yaml.load(text, Loader=loader) or {}
        except yaml.YAMLError as exc:
            raise MappingError(f"{path}: not valid YAML: {exc}") from None
        _validate(data, path)
        for code, spec in data.get("diagnostics", {}).items():
            if code in diagnostics:
                raise MappingError(f"{path}: diagnostic {code} is defined twice")
            diagnostics[code] = spec
        for key, into in (("entries", entries), ("training", training)):
            for i, raw in enumerate(data.get(key, [])):
                params = _params(raw, f"{path}: {key}/{i}")
                proven = (folder / "examples" / raw["id"] / "output.txt").is_file()
                tensors = raw.pop("tensors", None)
                if tensors is not None:
                    tensors = _tensors(tensors, f"{path}: {key}/{i} ({raw['id']})")
                attributes = _tensors(raw.pop("attributes", ()), f"{path}: {key}/{i} ({raw['id']}) attributes")
                into.append(Entry(params=params, proven=proven, tensors=tensors, attributes=attributes, **raw))
                where[id(into[-1])] = f"{path}: {key}/{i}"
                _check_settings(into[-1], where[id(into[-1])])
        dropout.update(data.get("functional_dropout", ()))
        for name, raw in data.get("frameworks", {}).items():
            if name in frameworks:
                raise MappingError(f"{path}: frameworks: {name} is defined twice")
            frameworks[name] = _framework(name, raw)
        for i, raw in enumerate(data.get("layers", [])):
            layers.append(_layer(raw, path, i))
        for raw in data.get("wrappers", []):
            wrappers.append(Wrapper(cls=raw["class"], attribute=raw["attribute"], note=raw["note"]))
        for i, raw in enumerate(data.get("markers", [])):
            if raw["api"] in markers:
                raise MappingError(f"{path}: markers/{i}: {raw['api']} is listed twice")
            markers[raw["api"]] = Marker(**raw)
        for i, raw in enumerate(data.get("modules", [])):
            if raw["torch"] in modules:
                raise MappingError(f"{path}: modules/{i}: {raw['torch']} is listed twice")
            modules[raw["torch"]] = LibraryModule(**{**raw, "names": tuple(raw["names"])})
        for i, raw in enumerate(data.get("selective_ops", [])):
            if raw["torch"] in selective_ops:
                raise MappingError(f"{path}: selective_ops/{i}: {raw['torch']} is listed twice")
            selective_ops[raw["torch"]] = SelectiveOp(
                torch=raw["torch"], probes=tuple(raw.get("probes", ())), unprobed=raw.get("unprobed"),
                mindspore=tuple(MindSporeOp(op=m) if isinstance(m, str) else MindSporeOp(**m) for m in raw["mindspore"]))
        composite.update((raw["torch"], tuple(raw["runs_as"])) for raw in data.get("composite_ops", []))
        ignored.update((raw["mindspore"], raw["torch"]) for raw in data.get("dispatch_ignored", []))
        runtime.update(data.get("runtime", {}))
        for raw in data.get("loop", []):
            loop.append(ReportedApi(**{**raw, "aliases": tuple(raw.get("aliases", ()))}))
        for i, raw in enumerate(data.get("reported", [])):
            api = ReportedApi(**{**raw, "aliases": tuple(raw.get("aliases", ()))})
            for name in api.names:
                if name in reported:
                    raise MappingError(f"{path}: reported/{i}: {name} is listed twice (also under {reported[name].api})")
                reported[name] = api
    first: dict[str, Entry] = {}
    for e in [*entries, *training]:
        if e.id in first:
            raise MappingError(f"{where[id(e)]}/id: entry ids defined twice: {e.id} (also at {where[id(first[e.id])]})")
        first[e.id] = e
        listed = [n for side in ("torch", "mindspore") for n in e.names(side) if n in reported]
        if listed:
            raise MappingError(f"{where[id(e)]}: {', '.join(listed)} is translated by entry {e.id} and also listed "
                               f"in reported.yaml as a name no entry translates: remove it there")
    for e in [*entries, *training]:
        for k, p in enumerate(e.params):
            for key, code in p.codes:
                if code not in diagnostics:
                    raise MappingError(f"{where[id(e)]}/params/{k}/{key}: params name diagnostic codes that "
                                       f"diagnostics.yaml lacks: {code}")
    missing = sorted({"torch", "mindspore"} - set(frameworks))
    if entries and missing:
        raise MappingError(f"{folder}: no frameworks.yaml facts for {', '.join(missing)}: the translator needs them "
                           "beside the entries (copy mappings/frameworks.yaml into the folder)")
    seen: dict = {e.id: where[id(e)] for e in entries}
    for layer in layers:      # a layer pair is an entry's or parameters.yaml's, never both, and listed once
        if layer.id in seen:
            raise MappingError(f"{folder}: layers: layer id {layer.id} defined twice (also at {seen[layer.id]})")
        seen[layer.id] = "parameters.yaml"
    pairs: dict = {}
    for e in [*(e for e in entries if e.tensors is not None), *layers]:
        key = (e.torch["api"], e.mindspore["api"])
        if key in pairs:
            raise MappingError(f"{folder}: layer pair {key[0]} / {key[1]} defined twice ({pairs[key]} and {e.id}): "
                               "give it tensors in one place")
        pairs[key] = e.id
    for e in entries:
        if e.fallback_for:
            main = first.get(e.fallback_for)
            if main is None or main.torch["api"] != e.torch["api"] or main.rule != e.rule or e.source != "torch":
                raise MappingError(f"{where[id(e)]}/fallback_for: {e.fallback_for} is no entry of {e.torch['api']} "
                                   f"with rule {e.rule}: a fallback stands in for an entry of the same torch API "
                                   "and rule, translated from torch")
    entries = [dataclasses.replace(e, domain=domains[e.id]) if domains.get(e.id) else e for e in entries]
    taken = {n for e in [*entries, *training] if e.translates_from("torch") for n in e.names("torch")}
    table = table_entries(table_rows, taken | set(reported) | set(markers), folder / TABLE_VERDICTS)
    table = tuple(dataclasses.replace(e, domain=domains[e.id]) if domains.get(e.id) else e for e in table)
    return Mappings(entries=tuple(entries), diagnostics=diagnostics, layers=tuple(layers), table=table,
                    wrappers=tuple(wrappers), functional_dropout=frozenset(dropout), frameworks=frameworks,
                    reported=tuple({id(r): r for r in reported.values()}.values()), training=tuple(training), loop=tuple(loop),
                    markers=tuple(markers.values()), modules=tuple(modules.values()),
                    selective=Selective(ops=tuple(selective_ops.values()), composite=composite, ignored=ignored,
                                        runtime=runtime))


DOMAIN_FILE = Path("domain.json")   # `recompat prove` writes it: each entry's outcomes over its domain (compat/domain.py)
DOMAIN_WRONG = ("differs", "crashes")   # the outcomes of a part that make it one the entry is wrong on (Entry.domain)


def _domains(path: Path, text: bytes) -> dict[str, tuple[tuple[str, str], ...]]:
    """The parts of each entry's domain its counterpart differs on, from the recorded domain probes."""
    try:
        entries = json.loads(text.decode("utf-8"))["entries"]
        return {k: tuple((part, outcome) for part, outcome in v["parts"].items() if outcome.startswith(DOMAIN_WRONG))
                for k, v in entries.items()}
    except (ValueError, KeyError, TypeError, AttributeError) as exc:
        raise MappingError(f"{path}: cannot read the recorded domain probes ({exc}): run `recompat prove` to "
                           "write them again") from None


TABLE_VERDICTS = Path("table") / "verdicts.json"   # `recompat verify-table --record` writes it (compat/table.py)
# the table's sections of functions and Tensor methods, and the rule an entry made from one of their rows takes
TABLE_RULES = {"torch": "api_function", "torch.nn.functional": "api_function", "torch.linalg": "api_function",
               "torch.special": "api_function", "torch.Tensor": "tensor_method"}


def table_entries(rows: list[dict], taken: set[str], where: Path = TABLE_VERDICTS) -> tuple[Entry, ...]:
    """An entry for each row of the official mapping table that recompat's probe found to agree, for the translator
    (--scope model, torch -> MindSpore), where no entry of mappings/ translates its torch API (`taken`). Only what the
    probe showed carries over: the parameters its agreeing calls gave are kept (a required one, which the calls gave
    positionally, under MindSpore's name at its place), every other one is left by hand unless the call gives its
    torch default (RC324), and no default is written out (fill: false). A row with a difference in another dtype
    (float16 round-off, a MindSpore error), or without a recorded call, makes none."""
    out = []
    for row in rows:
        try:
            entry = _table_entry(row, taken)
        except (KeyError, TypeError, AttributeError) as exc:
            name = row.get("torch_api") if isinstance(row, dict) else repr(row)
            raise MappingError(f"{where}: the row of {name} cannot be read ({type(exc).__name__}: {exc}): run "
                               "`recompat verify-table --record` to write the verdicts again") from None
        if entry is not None:
            out.append(entry)
    return tuple(out)


def _table_entry(row: dict, taken: set[str]) -> Entry | None:
    rule, call, api = TABLE_RULES.get(row["section"]), row.get("call") or {}, row["torch_api"]
    if (row["verdict"] != "agrees" or rule is None or not call or api in taken
            or any(o.startswith("differs") for o in (row.get("dtypes") or {}).values())):
        return None
    torch_args, ms_args = signature_arguments(call["torch"]), signature_arguments(call["mindspore"])
    if torch_args is None or ms_args is None:
        return None
    tried = ", ".join(call["tried"]) or "no parameter"
    ms_positional = [a.arg for a in (*ms_args.posonlyargs, *ms_args.args)]
    ms_names = {*ms_positional, *(a.arg for a in ms_args.kwonlyargs)}
    torch_positional = [*torch_args.posonlyargs, *torch_args.args]
    required = len(torch_positional) - len(torch_args.defaults)   # the calls gave these by place
    params = []
    for a in (*torch_positional, torch_args.vararg, *torch_args.kwonlyargs):
        if a is None:
            continue
        place = next((i for i, b in enumerate(torch_positional) if b is a), None)
        target = (ms_positional[place] if place is not None and place < min(required, len(ms_positional))
                  else a.arg if a.arg in ms_names else None)
        if a.arg in call["tried"] and target is not None:
            params.append({"torch": a.arg, "mindspore": target, "action": "keep" if target == a.arg else "rename",
                           "fill": False, "note": {}})
        else:   # left by hand unless the call gives its torch default
            params.append({"torch": a.arg, "mindspore": None, "action": "drop", "code": "RC324",
                           "why": f"it tried {tried}", "fill": False, "note": {}})
    evidence = f"{row['reason']}; tried {tried}"
    raw = {"id": f"table:{api}", "source": "torch", "rule": rule,
           "torch": {"api": api, "signature": call["torch"]},
           "mindspore": {"api": row["mindspore_api"], "signature": call["mindspore"]},
           "summary": {"en": f"The official mapping table's row, verified: {evidence}.",
                       "zh": f"官方映射表中的一行,经 verify-table 验证:{evidence}。"},
           "params": params}
    try:
        return Entry(params=_params(raw, f"{TABLE_VERDICTS}: {api}"), proven=True, table_row=evidence, **raw)
    except MappingError:
        return None   # a signature with a default that does not read (`<object ...>`): nothing to go by


@functools.lru_cache(maxsize=None)
def default() -> Mappings:
    """The mappings shipped with recompat, loaded once per process."""
    return load(HERE)
