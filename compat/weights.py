"""Weight transfer between a torch nn.Module and a MindSpore nn.Cell, both ways, by structure and name.

    t = transfer_weights(torch_model, ms_model)     # torch -> MindSpore
    t = transfer_weights(ms_model, torch_model)     # MindSpore -> torch
    t.name_map["fc1.weight"]                         # -> "fc1.weight" (BatchNorm: "bn.weight" -> "bn.gamma")
    t.settings                                       # settings that make outputs differ even with equal weights
    t.warnings                                       # those, and everything else worth a look

How it pairs. Both module trees are walked (torch `_modules`, MindSpore `_cells`: the trees
named_modules() and cells_and_names() walk, shared children kept at every path) and modules pair by
path: attribute names, and the indices torch's Sequential/ModuleList and MindSpore's
SequentialCell/CellList give their children ("0", "1", ...; parameter-free layers count too). Within
a pair, the parameters and buffers of both layers pair by name through the layer pair's mapping entry:
its `tensors` (mappings/nn_modules.yaml; BatchNorm weight <-> gamma, ...), or, for a pair that has no
entry yet, mappings/parameters.yaml `layers`. A known pair owns its whole subtree (MindSpore's
BatchNorm3d keeps its parameters in a child `bn2d`); a name it does not list, and every name in a pair
it does not know, pairs with the same name. torch wrappers listed in parameters.yaml
(checkpoint_wrapper's `_checkpoint_wrapped_module`, ...) add no path component.

Settings. The entry's params marked `compare` (BatchNorm momentum, Conv2d padding, LayerNorm eps, ...)
are compared on every paired layer and each difference is a `Setting` (also a warning): torch's value goes
through the
param's `convert`, the converter translation uses (translator/convert.py), so the two cannot disagree
on a convention. compare() fails a pair with a differing setting (strict, its default).

Pairing without copying. `transfer_weights(..., copy=False)` pairs and checks as above and copies nothing: what
compare(weights="as-is") needs to judge the user's own weight conversion.

Names reported are each framework's own: torch's as named_parameters() gives them (wrapper prefixes
kept), MindSpore's as parameters_and_names() gives them: the attribute path from the root Cell.
A Parameter's own `.name` is usually the same path; it differs for parameters named explicitly
(Parameter(..., name=...)), under a root Cell built with auto_prefix=False, and for a Cell held at
two paths (the last assignment names it). Transfer.ms_parameter_names and Transfer.torch_name()
cover both.

What it refuses. A tensor on either side with no counterpart, a shape mismatch, or one destination
Parameter that would receive two different sources (tied on one side only): with strict=True (the
default) a WeightTransferError lists every one of them and nothing is copied; with strict=False the
Transfer lists them in .problems and everything else is copied. No parameter is ever left silently
at its initial value.

Values are copied exactly (float32 bit for bit; bfloat16 through float32, which is exact) and
converted to the destination's dtype: torch -> MindSpore with Parameter.set_data(Tensor(array)),
which keeps the Parameter object and its name; MindSpore -> torch with copy_() under no_grad().
set_data accepts any shape without complaint, so shapes are checked here first.
"""
from __future__ import annotations

import ast
import difflib
import inspect
import math
import sys
from dataclasses import dataclass, field
from typing import Any, NamedTuple

import numpy as np

from recompat import mappings as _mappings
from recompat.translator import convert as _convert

TORCH, MINDSPORE = "torch", "mindspore"
_LABEL = {TORCH: "torch", MINDSPORE: "MindSpore"}

ADVICE = (
    "What to do: give both models the same structure and attribute names (the indices of torch's "
    "Sequential/ModuleList and MindSpore's SequentialCell/CellList count the same way, parameter-free layers "
    "included), make each paired layer hold the same tensors with the same shapes, or, where two layer classes name "
    "their parameters differently, give the pair's mapping entry `tensors` (mappings/nn_modules.yaml). "
    "transfer_weights(..., strict=False) returns this report without raising."
)


class WeightTransferError(Exception):
    """Some tensor could not be transferred; the message lists every problem. `.transfer` holds the report."""

    def __init__(self, message: str, transfer: "Transfer"):
        super().__init__(message)
        self.transfer = transfer


class Pair(NamedTuple):
    torch_name: str
    ms_name: str
    shape: tuple          # torch's shape (MindSpore's differs only by a layout in the entry's tensors)


class Skipped(NamedTuple):
    name: str
    framework: str        # "torch" | "mindspore": the side the tensor is on
    reason: str


class Setting(NamedTuple):
    """A paired layer's setting whose MindSpore value differs from torch's (after the param's convert)."""
    name: str             # torch's layer path and argument: "encoder.bn.momentum"
    message: str

    def __str__(self) -> str:
        return self.message


@dataclass
class Problem:
    kind: str             # unmatched | shape | tied
    message: str
    torch_name: str | None = None
    ms_name: str | None = None
    torch_shape: tuple | None = None
    ms_shape: tuple | None = None

    def __str__(self) -> str:
        return self.message


@dataclass
class Transfer:
    """What transfer_weights did. Names are each framework's own (see the module docstring)."""

    direction: str                                    # "torch->mindspore" | "mindspore->torch"
    pairs: list[Pair] = field(default_factory=list)   # copied (all of them unless problems)
    skipped: list[Skipped] = field(default_factory=list)
    name_map: dict[str, str] = field(default_factory=dict)      # torch name -> MindSpore name
    problems: list[Problem] = field(default_factory=list)
    warnings: list[str] = field(default_factory=list)           # every setting's message among them
    settings: list[Setting] = field(default_factory=list)
    buffers: list[str] = field(default_factory=list)            # torch names of paired buffers (not parameters)
    ms_parameter_names: dict[str, str] = field(default_factory=dict)   # MindSpore path -> Parameter.name
    copied: bool = False
    # the paired tensor objects, (torch tensor, MindSpore Parameter), in the order of pairs
    tensors: list[tuple[Any, Any]] = field(default_factory=list, repr=False)

    @property
    def ok(self) -> bool:
        return not self.problems

    def torch_name(self, ms: Any) -> str | None:
        """The torch name of a MindSpore tensor: its path, its Parameter.name, or the Parameter itself."""
        rev = {m: t for t, m in self.name_map.items()}
        if isinstance(ms, str) and ms in rev:
            return rev[ms]
        by_param_name = {pname: rev[path] for path, pname in self.ms_parameter_names.items() if path in rev}
        return by_param_name.get(getattr(ms, "name", ms))

    def values(self):
        """(torch name, torch's value, MindSpore's value in torch's shape) for each pair, as NumPy arrays: what the
        two models hold now."""
        for pair, (t, m) in zip(self.pairs, self.tensors):
            yield pair.torch_name, _torch_array(t), _ms_array(m).reshape(pair.shape)

    def report(self) -> str:
        lines = [f"transfer_weights {self.direction}: {len(self.pairs)} tensors "
                 f"{'copied' if self.copied else 'paired, nothing copied'}, {len(self.skipped)} skipped, "
                 f"{len(self.problems)} problems, {len(self.warnings)} warnings"]
        lines += [f"  problem: {p}" for p in self.problems]
        lines += [f"  skipped: {_LABEL[s.framework]} '{s.name}': {s.reason}" for s in self.skipped]
        lines += [f"  warning: {w}" for w in self.warnings]
        return "\n".join(lines)


# --------------------------------------------------------------------------------------------------------------
# the two trees

@dataclass
class _Slot:
    """One parameter or buffer (or a name registered as None) of one module."""
    side: str
    name: str             # the framework's full name
    key: str              # attribute name in its module
    node: str             # normalized path of its module
    module: Any
    tensor: Any           # None: registered as None (torch: bias=False, affine=False, ...)
    trainable: bool
    buffer: bool = False
    persistent: bool = True
    rel: str = ""         # name relative to the paired layer

    @property
    def shape(self) -> tuple:
        return tuple(self.tensor.shape)

    @property
    def dtype(self) -> str:
        return str(self.tensor.dtype).replace("torch.", "").lower()

    @property
    def where(self) -> str:
        return f"{type(self.module).__name__} '{self.node or '(root)'}'"


class _Tree:
    def __init__(self, side: str):
        self.side = side
        self.nodes: dict[str, Any] = {}          # normalized path -> module
        self.own: dict[str, list[_Slot]] = {}    # normalized path -> its own tensors
        self.children: dict[str, list[str]] = {}

    def add(self, path: str, parent: str | None, module, slots: list[_Slot]) -> None:
        self.nodes[path], self.own[path], self.children[path] = module, slots, []
        if parent is not None:
            self.children[parent].append(path)

    def descendants(self, path: str) -> list[str]:
        """`path` and every path below it, in walk order."""
        out, todo = [], [path]
        while todo:
            p = todo.pop()
            out.append(p)
            todo.extend(reversed(self.children[p]))
        return out

    def nearest(self, path: str) -> tuple[str, str]:
        """The deepest existing ancestor of a missing path and the first missing component."""
        parts = path.split(".")
        for i in range(len(parts) - 1, -1, -1):
            anc = ".".join(parts[:i])
            if anc in self.nodes:
                return anc, parts[i]
        return "", parts[0]


def _join(a: str, b: str) -> str:
    return f"{a}.{b}" if a else b


def _resolve(dotted: str):
    """The object a qualified name denotes, looked up only in modules already imported (None if not)."""
    parts = dotted.split(".")
    for i in range(len(parts) - 1, 0, -1):
        mod = sys.modules.get(".".join(parts[:i]))
        if mod is None:
            continue
        obj = mod
        for part in parts[i:]:
            obj = vars(obj).get(part) if inspect.ismodule(obj) else getattr(obj, part, None)
            if obj is None:
                return None
        return obj
    return None


_CLASSES: dict[str, type] = {}


def _classes(dotted: str):
    """The class a qualified name denotes; None while its module is not imported (then nothing is an instance)."""
    if dotted not in _CLASSES:
        obj = _resolve(dotted)
        if not isinstance(obj, type):
            return None
        _CLASSES[dotted] = obj
    return _CLASSES[dotted]


def _torch_tree(root, wrappers) -> _Tree:
    tree = _Tree(TORCH)

    def wrapped_attr(mod):
        for w in wrappers:
            cls = _classes(w.cls)
            if cls is not None and isinstance(mod, cls) and mod._modules.get(w.attribute) is not None:
                return w.attribute
        return None

    def own_tensors(mod) -> bool:
        return any(v is not None for v in (*mod._parameters.values(), *mod._buffers.values()))

    def visit(mod, tpath: str, npath: str, parent: str | None, stack: tuple):
        if id(mod) in stack:
            return
        stack = (*stack, id(mod))
        attr = wrapped_attr(mod)
        if attr is not None and not own_tensors(mod):
            for name, child in mod._modules.items():
                if child is not None:
                    if name == attr:
                        visit(child, _join(tpath, name), npath, parent, stack)
                    else:
                        visit(child, _join(tpath, name), _join(npath, name), npath, stack)
            return
        if npath not in tree.nodes:
            slots = []
            for key, p in mod._parameters.items():
                slots.append(_Slot(TORCH, _join(tpath, key), key, npath, mod, p,
                                   trainable=bool(p is not None and p.requires_grad)))
            for key, b in mod._buffers.items():
                slots.append(_Slot(TORCH, _join(tpath, key), key, npath, mod, b, trainable=False, buffer=True,
                                   persistent=key not in mod._non_persistent_buffers_set))
            tree.add(npath, parent, mod, slots)
        for name, child in mod._modules.items():
            if child is not None:
                visit(child, _join(tpath, name), _join(npath, name), npath, stack)

    visit(root, "", "", None, ())
    return tree


def _ms_tree(root) -> _Tree:
    tree = _Tree(MINDSPORE)

    def visit(cell, path: str, parent: str | None, stack: tuple):
        if id(cell) in stack:
            return
        stack = (*stack, id(cell))
        if path not in tree.nodes:
            slots = []
            for key, p in cell._params.items():
                if p is not None and getattr(p, "inited_param", None) is not None:
                    p = p.inited_param
                slots.append(_Slot(MINDSPORE, _join(path, key), key, path, cell, p,
                                   trainable=bool(p is not None and p.requires_grad)))
            transient = getattr(cell, "_lazy_non_persistent_buffers_set", ())   # Cell.register_buffer's
            for key, b in (getattr(cell, "_buffers", None) or {}).items():
                slots.append(_Slot(MINDSPORE, _join(path, key), key, path, cell, b, trainable=False, buffer=True,
                                   persistent=key not in transient))
            tree.add(path, parent, cell, slots)
        children = getattr(cell, "_cells", None)
        children = children.items() if children is not None else cell.name_cells().items()
        for name, child in children:
            if child is not None:
                visit(child, _join(path, name), path, stack)

    visit(root, "", None, ())
    return tree


# --------------------------------------------------------------------------------------------------------------
# layer pairs (mapping entries with `tensors`) and their settings (the entry's params with `compare`)

_MATCH_CACHE: dict = {}


def _layer_pair(tcls, mcls, layers):
    key = (tcls, mcls, id(layers))
    if key not in _MATCH_CACHE or _MATCH_CACHE[key][0] is not layers:
        best = None
        for layer in layers:
            T, M = _classes(layer.torch["api"]), _classes(layer.mindspore["api"])
            if T is None or M is None or not issubclass(tcls, T) or not issubclass(mcls, M):
                continue
            score = tcls.__mro__.index(T) + mcls.__mro__.index(M)
            if best is None or score < best[0]:
                best = (score, layer)
        _MATCH_CACHE[key] = (layers, best[1] if best else None)
    return _MATCH_CACHE[key][1]


def _known_counterparts(cls, side: str, layers) -> list[str]:
    """The classes the mappings pair with `cls` (a torch class when side is torch)."""
    out = []
    for layer in layers:
        mine, other = ((layer.torch["api"], layer.mindspore["api"]) if side == TORCH
                       else (layer.mindspore["api"], layer.torch["api"]))
        C = _classes(mine)
        if C is not None and issubclass(cls, C):
            out.append(other.rsplit(".", 1)[-1] if other.startswith(("torch.nn.", "mindspore.nn."))
                       else other.replace("mindspore.", "").replace("torch.", ""))
    return out


def _fmt(v) -> str:
    if isinstance(v, float):
        return f"{v:.6g}"
    if isinstance(v, tuple):
        return "(" + ", ".join(_fmt(x) for x in v) + ("," if len(v) == 1 else "") + ")"
    return repr(v)


def _number(v) -> bool:
    return isinstance(v, (int, float)) and not isinstance(v, bool)


def _equal(a, b) -> bool:
    if _number(a) and _number(b):
        return math.isclose(a, b, rel_tol=1e-6, abs_tol=1e-12)
    if isinstance(a, (tuple, list)) and isinstance(b, (tuple, list)):
        return len(a) == len(b) and all(_equal(x, y) for x, y in zip(a, b))
    return a == b


def _getattr_path(obj, dotted: str):
    for part in dotted.split("."):
        obj = getattr(obj, part)
    return obj


def _as_tuple(v, n: int) -> tuple:
    return tuple(v) if isinstance(v, (tuple, list)) else (v,) * n


def _target(p) -> str:
    """The MindSpore name a compared param's warning speaks of."""
    return p.mindspore or p.compare["read"]


def _converted(p, to: str, value) -> dict:
    """A param's value on the `to` side, as translation converts it (the param's convert, else unchanged): the
    arguments it gives, by name. Raises Unconvertible where the value has no counterpart."""
    frm = MINDSPORE if to == TORCH else TORCH
    read = (p.compare or {}).get("read")
    src = getattr(p, frm) or read
    dst = getattr(p, to) or (read if to == MINDSPORE else p.torch)
    if not p.convert:
        return {dst: value}
    return _convert.apply(p.convert, to, {src: value}, {src: dst})


def _check_setting(layer, p, t, m, path: str) -> list[str]:
    """A warning sentence for each MindSpore argument of the setting `p` whose value differs from torch's (after
    the param's convert, as translation would write it); none when they agree."""
    c = p.compare
    names = c.get("arguments") or [_target(p)]
    try:
        tv = getattr(t, p.torch)
        stored = {a: _getattr_path(m, c.get("read") or a) for a in names}
    except AttributeError:
        return []
    if p.convert == "conv_padding":
        w = _conv_padding(t, m, tv, path)
        return [w] if w else []
    tname, mname = type(t).__name__, type(m).__name__
    where = f"{tname} '{path or '(root)'}'"
    kept = c.get("kept")
    try:
        expected = _converted(p, MINDSPORE, tv)           # the arguments translation writes for torch's value
    except _convert.Unconvertible:
        expected = None
    out = []
    for name, mv in stored.items():
        row = p if name == _target(p) else layer.param(name, MINDSPORE)
        default = row.mindspore_default if row is not None else None
        want = _MISSING if expected is None else expected.get(name, _literal(default))
        actual, ms_torch = mv, None           # the Cell's value as this argument, and in torch's terms
        try:
            if kept == "trailing":            # MindSpore keeps it for more axes: its last ones are torch's
                n = len(tv) if isinstance(tv, (tuple, list)) else 1
                ms_torch = tuple(_as_tuple(mv, n)[-n:])
            elif kept == "torch":             # the Cell keeps torch's value (BatchNorm's momentum: 1 - its argument)
                ms_torch = mv
                actual = _converted(p, MINDSPORE, mv)[name]
            elif kept is not None:            # the Cell keeps it as another argument (Dropout: keep_prob)
                other = layer.param(kept, MINDSPORE)
                ms_torch = _converted(other, TORCH, mv)[other.torch]
                actual = _converted(p, MINDSPORE, ms_torch)[name]
            elif "arguments" not in c:        # the Cell keeps this argument
                ms_torch = _converted(p, TORCH, mv)[p.torch]
        except (_convert.Unconvertible, KeyError, TypeError):
            pass
        if kept == "trailing":
            n = len(ms_torch)
            equal = _equal(tuple(_as_tuple(tv, n)), ms_torch)
        elif want is not _MISSING:
            equal = _equal(want, actual)
        else:
            equal = ms_torch is not None and _equal(tv, ms_torch)
        if equal:
            continue
        is_default = " (MindSpore's default)" if default is not None and _mappings.same(_fmt(actual), default) \
            else ""
        got = f"{name}={_fmt(actual)}{is_default}"
        if ms_torch is not None and kept != "trailing" and not _equal(actual, ms_torch):
            got += f", i.e. {p.torch}={_fmt(ms_torch)} in torch's terms"
        why = f" ({c['why']})" if c.get("why") else ""
        fix = (f"construct it with {name}={_fmt(want)}" if want is not _MISSING
               else f"MindSpore's {mname} has no equivalent of {p.torch}={_fmt(tv)}")
        out.append(f"{where}: torch {p.torch}={_fmt(tv)}, but the paired MindSpore {mname} has {got}{why}: {fix}. "
                   f"Results differ even with equal weights.")
    return out


_MISSING = object()     # no value to compare with (a default the entry does not know, or one that is not literal)


def _literal(text: str | None):
    if text is None:
        return _MISSING
    try:
        return ast.literal_eval(text)
    except (ValueError, SyntaxError):
        return _MISSING


def _pads(pads) -> str:
    return ", ".join(f"{a}/{b}" for a, b in pads)


def _conv_padding(t, m, tv, path: str) -> str | None:
    """torch's padding (+ padding_mode) against the Cell's pad_mode + padding: equal when both pad the same per axis.
    torch's padding is read in MindSpore's terms by the converter translation uses (conv_padding), and both sides'
    pads come from one function (conv_pads)."""
    n = len(t.kernel_size)
    mode = getattr(t, "padding_mode", "zeros")
    padding = tv[0] if isinstance(tv, tuple) and len(set(tv)) == 1 else tv    # (1, 1) is padding=1
    try:
        plain = _convert.apply("conv_padding", MINDSPORE, {"padding": padding}, {"padding": "padding"})
    except _convert.Unconvertible:
        return None
    want = _convert.conv_pads(plain["pad_mode"], plain["padding"], t.kernel_size, t.dilation, t.stride, n)
    have = _convert.conv_pads(m.pad_mode, m.padding, m.kernel_size, m.dilation, m.stride, n)
    try:
        args = _convert.apply("conv_padding", MINDSPORE, {"padding": padding, "padding_mode": mode},
                              {"padding": "padding"})
    except _convert.Unconvertible as exc:
        args, why = None, str(exc)
    if args is not None and have is not None and want is not None and have == want:
        return None
    if args is None:
        advice = f"{why}: pad the input yourself (ops.pad(..., mode='{mode}')) and use pad_mode='valid'"
    else:
        advice = "construct it with " + ", ".join(f"{k}={_fmt(v)}" for k, v in args.items()
                                                   if not (k == "padding" and v == 0))
    meaning = ("pads by the input size (TensorFlow-style 'same' with stride > 1)" if have is None
               else f"pads {_pads(have)} (before/after per axis)")
    tshown = f"padding={_fmt(tv)}" + (f", padding_mode={mode!r}" if mode != "zeros" else "")
    torch_pads = "" if want is None else f" pads {_pads(want)} (before/after per axis)"
    return (f"{type(t).__name__} '{path or '(root)'}': torch {tshown}{torch_pads}, but the paired MindSpore "
            f"{type(m).__name__} has pad_mode={m.pad_mode!r}, padding={_fmt(m.padding)}, which {meaning}: {advice}. "
            f"Results differ even with equal weights.")


# --------------------------------------------------------------------------------------------------------------
# copying

def _torch_array(t) -> np.ndarray:
    import torch

    t = t.detach()
    if t.dtype == torch.bfloat16:
        t = t.float()     # exact; numpy has no bfloat16
    return np.array(t.cpu().numpy(), copy=True)


def _ms_array(p) -> np.ndarray:
    import mindspore

    if p.dtype == mindspore.bfloat16:
        p = p.astype(mindspore.float32)    # exact; torch.from_numpy takes no bfloat16
    return np.array(p.asnumpy(), copy=True)


def _write_ms(p, arr: np.ndarray) -> None:
    import mindspore

    value = mindspore.Tensor(arr.reshape(p.shape), dtype=p.dtype)
    if isinstance(p, mindspore.Parameter):
        p.set_data(value)
    else:                   # a buffer (Cell.register_buffer): a Tensor
        p.assign_value(value)


def _write_torch(t, arr: np.ndarray) -> None:
    import torch

    with torch.no_grad():
        t.copy_(torch.from_numpy(np.ascontiguousarray(arr.reshape(tuple(t.shape)))))


# --------------------------------------------------------------------------------------------------------------

def _sides(a, b):
    import torch

    import mindspore

    if isinstance(a, torch.nn.Module) and isinstance(b, mindspore.nn.Cell):
        return a, b, f"{TORCH}->{MINDSPORE}"
    if isinstance(a, mindspore.nn.Cell) and isinstance(b, torch.nn.Module):
        return b, a, f"{MINDSPORE}->{TORCH}"
    raise TypeError(f"transfer_weights needs a torch nn.Module and a MindSpore nn.Cell (either order), "
                    f"not {type(a).__name__} and {type(b).__name__}")


def transfer_weights(src, dst, *, strict: bool = True, mappings=None, copy: bool = True) -> Transfer:
    """Copy every parameter and buffer of `src` into `dst` (a torch nn.Module and a MindSpore nn.Cell, either
    order), pairing modules by path and names through the layer pairs in mappings/. Raises WeightTransferError
    listing every unmatched tensor and shape mismatch (strict=True), or reports them in the Transfer.
    copy=False: pair and check only, leaving both models' values as they are."""
    tmodel, mmodel, direction = _sides(src, dst)
    maps = mappings or _mappings.default()
    layers = maps.layer_pairs
    tt, mt = _torch_tree(tmodel, maps.wrappers), _ms_tree(mmodel)
    result = Transfer(direction=direction)
    unmatched: list[tuple[_Slot, str]] = []            # (slot, why), problems filled in at the end
    candidates: list[tuple[_Slot, _Slot, Any]] = []    # (torch slot, ms slot, TensorPair or None)

    consumed: set[str] = set()      # paths of layer pairs, which own their subtrees

    def under_consumed(path: str) -> bool:
        parts = path.split(".") if path else []
        return any(".".join(parts[:i]) in consumed for i in range(len(parts) + 1))

    order = list(tt.nodes) + [p for p in mt.nodes if p not in tt.nodes]
    for path in order:
        if under_consumed(path):
            continue
        t, m = tt.nodes.get(path), mt.nodes.get(path)
        if t is None or m is None:
            tree, other = (tt, mt) if m is None else (mt, tt)
            anc, missing = other.nearest(path)
            anc_mod = other.nodes[anc]
            kids = [k for k, v in (anc_mod._modules if other.side == TORCH else anc_mod._cells).items()
                    if v is not None]
            why = (f"the {_LABEL[other.side]} model has no {'module' if other.side == TORCH else 'cell'} at "
                   f"'{path}' ({type(anc_mod).__name__} '{anc or '(root)'}' has no child '{missing}'"
                   + (f"; its children: {', '.join(kids)}" if kids else "") + ")")
            for s in tree.own.get(path, ()):
                if s.tensor is None:
                    continue
                if s.buffer and not s.persistent:
                    result.skipped.append(Skipped(s.name, TORCH, "non-persistent buffer (not in torch's "
                                                                  "state_dict) with no MindSpore counterpart"))
                    continue
                unmatched.append((s, why))
            continue

        layer = _layer_pair(type(t), type(m), layers)
        if layer is not None:
            consumed.add(path)
            tslots = [s for p in tt.descendants(path) for s in tt.own[p]]
            mslots = [s for p in mt.descendants(path) for s in mt.own[p]]
        else:
            tslots, mslots = list(tt.own[path]), list(mt.own[path])
            tknown = _known_counterparts(type(t), TORCH, layers)
            mknown = _known_counterparts(type(m), MINDSPORE, layers)
            if tknown and mknown:
                result.warnings.append(
                    f"torch {type(t).__name__} '{path or '(root)'}' is paired with MindSpore {type(m).__name__}: "
                    f"mappings/ pairs torch {type(t).__name__} with {' / '.join(tknown)}; "
                    f"their tensors were paired by equal names")
        for s in (*tslots, *mslots):
            s.rel = _relative(s, path)
        _pair_layer(path, t, m, layer, tslots, mslots, result, unmatched, candidates)
        if layer is not None:
            for p in layer.settings:
                for message in _check_setting(layer, p, t, m, path):
                    result.settings.append(Setting(_join(path, p.torch), message))
                    result.warnings.append(message)

    _finish(result, unmatched, candidates, tt, mt)

    if result.problems and strict:
        raise WeightTransferError(_message(result), result)
    if copy:
        _copy(result, candidates)
    return result


def _relative(s: _Slot, path: str) -> str:
    """The slot's name relative to the paired layer at `path` (normalized paths, wrapper prefixes dropped)."""
    full = _join(s.node, s.key)
    return full[len(path) + 1:] if path else full


def _pair_layer(path, t, m, layer, tslots, mslots, result, unmatched, candidates):
    """Pair the tensors of one pair of layers by name (through the layer pair, else the same name)."""
    by_t = {p.torch: p for p in (layer.tensors if layer else ()) if p.torch is not None}
    by_m = {p.mindspore: p for p in (layer.tensors if layer else ()) if p.mindspore is not None}
    mrel = {s.rel: s for s in mslots}
    used: set[str] = set()                       # MindSpore names paired or accounted for
    paired: set[str] = set()                     # torch names paired or accounted for
    missing: list[tuple[_Slot, str]] = []        # torch tensors without a counterpart, and the name looked for
    for s in tslots:
        tp = by_t.get(s.rel)
        if tp is not None and tp.mindspore is None:
            paired.add(s.rel)
            if s.tensor is not None:
                result.skipped.append(Skipped(s.name, TORCH, f"{tp.why} (torch {s.where})"))
            continue
        target = tp.mindspore if tp is not None else s.rel
        ms = mrel.get(target)
        if s.tensor is None:                      # torch registered it as None (bias=False, affine=False, ...)
            paired.add(s.rel)
            if ms is not None and ms.tensor is not None:
                used.add(target)
                if ms.trainable:
                    unmatched.append((ms, f"torch {s.where} registers {s.rel} as None, but this MindSpore "
                                          f"parameter is trainable (bias/affine settings differ)"))
                else:
                    result.skipped.append(Skipped(ms.name, MINDSPORE,
                                                  f"torch {s.where} registers {s.rel} as None (e.g. affine=False); "
                                                  f"MindSpore's is fixed (requires_grad=False) and kept as it is"))
            continue
        if ms is None or ms.tensor is None or target in used:
            if s.buffer and not s.persistent:
                paired.add(s.rel)
                result.skipped.append(Skipped(s.name, TORCH, "non-persistent buffer (not in torch's state_dict) "
                                                             "with no MindSpore counterpart"))
            else:
                missing.append((s, target))
            continue
        used.add(target)
        paired.add(s.rel)
        candidates.append((s, ms, tp))
    mname, tname, where = type(m).__name__, type(t).__name__, path or "(root)"
    left_m = [x.rel for x in mslots if x.tensor is not None and x.rel not in used
              and not (x.rel in by_m and by_m[x.rel].torch is None)]
    left_t = [x.rel for x, _ in missing]
    for s, target in missing:
        ms = mrel.get(target)
        if ms is not None and ms.tensor is None:
            why = f"MindSpore {mname} '{where}' registers {target} as None"
        else:
            why = f"MindSpore {mname} '{where}' has no {target}"
        why += f" (its unpaired tensors: {', '.join(left_m)})" if left_m else " (it has no unpaired tensors)"
        unmatched.append((s, why))
    for ms in mslots:
        if ms.rel in used or ms.tensor is None:
            continue
        tp = by_m.get(ms.rel)
        if tp is not None and tp.torch is None:
            result.skipped.append(Skipped(ms.name, MINDSPORE, f"{tp.why} (MindSpore {ms.where})"))
            continue
        source = tp.torch if tp is not None else ms.rel
        why = f"torch {tname} '{where}' has no {source}"
        why += f" (its unpaired tensors: {', '.join(left_t)})" if left_t else " (it has no unpaired tensors)"
        unmatched.append((ms, why))


def _finish(result: Transfer, unmatched, candidates, tt: _Tree, mt: _Tree):
    # shapes
    good = []
    for ts, ms, tp in candidates:
        want = list(ts.shape)
        if tp is not None and tp.insert_axis is not None:
            want.insert(tp.insert_axis, 1)
        if tuple(want) != ms.shape:
            result.problems.append(Problem(
                "shape", f"shape mismatch: torch '{ts.name}' {_fmt(ts.shape)} in {ts.where} vs MindSpore "
                         f"'{ms.name}' {_fmt(ms.shape)} in {ms.where}"
                         + (f" (MindSpore's layout: torch's with an axis of 1 inserted at {tp.insert_axis}, "
                            f"so {_fmt(tuple(want))})" if tp is not None and tp.insert_axis is not None else ""),
                ts.name, ms.name, ts.shape, ms.shape))
        else:
            good.append((ts, ms, tp))
    candidates[:] = good

    # tied on one side only
    forward = result.direction == f"{TORCH}->{MINDSPORE}"
    by_dst: dict[int, list] = {}
    by_src: dict[int, list] = {}
    for ts, ms, tp in candidates:
        src, dst = (ts, ms) if forward else (ms, ts)
        by_dst.setdefault(id(dst.tensor), []).append((src, dst))
        by_src.setdefault(id(src.tensor), []).append((src, dst))
    bad_dst = set()
    for key, items in by_dst.items():
        sources = {id(s.tensor) for s, _ in items}
        if len(sources) > 1:
            bad_dst.add(key)
            d = items[0][1]
            result.problems.append(Problem(
                "tied", f"{_LABEL[d.side]} '{d.name}' is one tensor shared by "
                        f"{', '.join(repr(x.name) for _, x in items)}, but the {_LABEL[items[0][0].side]} "
                        f"tensors paired with them are separate ({', '.join(repr(s.name) for s, _ in items)}): "
                        f"tie them in both models or in neither",
                *(_names(items[0][0], d))))
    for key, items in by_src.items():
        dsts = {id(d.tensor) for _, d in items}
        if len(dsts) > 1:
            s = items[0][0]
            result.warnings.append(
                f"{_LABEL[s.side]} '{s.name}' is one tensor shared by {', '.join(repr(x.name) for x, _ in items)}, "
                f"but the {_LABEL[items[0][1].side]} tensors paired with them are separate: the value is copied to "
                f"each, and their gradients will not be summed as the shared one's are")
    candidates[:] = [c for c in candidates if id((c[1] if forward else c[0]).tensor) not in bad_dst]

    # unmatched, with a hint at the closest unmatched tensor of the same shape on the other side
    pool = {TORCH: [s for s, _ in unmatched if s.side == TORCH], MINDSPORE: [s for s, _ in unmatched
                                                                            if s.side == MINDSPORE]}
    for s, why in unmatched:
        other = MINDSPORE if s.side == TORCH else TORCH
        same_shape = {o.name: o for o in pool[other] if _shape_fits(s, o)}
        close = difflib.get_close_matches(s.name, list(same_shape), n=1, cutoff=0.5)
        hint = f"; closest unpaired {_LABEL[other]} tensor of that shape: '{close[0]}'" if close else ""
        kind = "parameter" if s.trainable else ("buffer" if s.buffer else "non-trainable parameter")
        result.problems.append(Problem(
            "unmatched", f"{_LABEL[s.side]} {kind} '{s.name}' {_fmt(s.shape)} {s.dtype} in {s.where} has no "
                         f"{_LABEL[other]} counterpart: {why}{hint}",
            s.name if s.side == TORCH else None, s.name if s.side == MINDSPORE else None,
            s.shape if s.side == TORCH else None, s.shape if s.side == MINDSPORE else None))

    # the report
    conversions: dict[tuple[str, str], list[str]] = {}
    for ts, ms, tp in candidates:
        result.pairs.append(Pair(ts.name, ms.name, ts.shape))
        result.tensors.append((ts.tensor, ms.tensor))
        if ts.buffer:
            result.buffers.append(ts.name)
        src, dst = (ts, ms) if forward else (ms, ts)
        if src.dtype != dst.dtype:
            conversions.setdefault((src.dtype, dst.dtype), []).append(src.name)
    for (a, b), names in conversions.items():
        shown = ", ".join(names[:5]) + (f", ... ({len(names)} in all)" if len(names) > 5 else "")
        result.warnings.append(f"dtype converted from {a} to {b} (the destination's) for: {shown}")
    result.name_map = {p.torch_name: p.ms_name for p in result.pairs}
    result.ms_parameter_names = {s.name: s.tensor.name for slots in mt.own.values() for s in slots
                                 if s.tensor is not None and not s.buffer}


def _names(a: _Slot, b: _Slot):
    ts, ms = (a, b) if a.side == TORCH else (b, a)
    return ts.name, ms.name, ts.shape, ms.shape


def _shape_fits(a: _Slot, b: _Slot) -> bool:
    return tuple(d for d in a.shape if d != 1) == tuple(d for d in b.shape if d != 1)


def _message(result: Transfer) -> str:
    head = (f"transfer_weights {result.direction.replace(TORCH, 'torch').replace(MINDSPORE, 'MindSpore')}: "
            f"{len(result.problems)} problem{'s' if len(result.problems) != 1 else ''}, nothing was copied:")
    return "\n".join([head, *[f"  - {p}" for p in result.problems], ADVICE])


def _copy(result: Transfer, candidates) -> None:
    forward = result.direction == f"{TORCH}->{MINDSPORE}"
    done = set()
    for ts, ms, tp in candidates:
        key = (id(ts.tensor), id(ms.tensor))
        if key in done:
            continue
        done.add(key)
        if forward:
            _write_ms(ms.tensor, _torch_array(ts.tensor))
        else:
            _write_torch(ts.tensor, _ms_array(ms.tensor))
    result.copied = True
