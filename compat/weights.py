"""Weight transfer between a torch nn.Module and a MindSpore nn.Cell, both ways, by structure and name.

    t = transfer_weights(torch_model, ms_model)     # torch -> MindSpore
    t = transfer_weights(ms_model, torch_model)     # MindSpore -> torch
    t.name_map["fc1.weight"]                         # -> "fc1.weight" (BatchNorm: "bn.weight" -> "bn.gamma")
    t.warnings                                       # settings that make outputs differ even with equal weights

How it pairs. Both module trees are walked (torch `_modules`, MindSpore `_cells`: the trees
named_modules() and cells_and_names() walk, shared children kept at every path) and modules pair by
path: attribute names, and the indices torch's Sequential/ModuleList and MindSpore's
SequentialCell/CellList give their children ("0", "1", ...; parameter-free layers count too). Within
a pair, the parameters and buffers of both layers pair by name through the layer pair in
mappings/parameters.yaml (BatchNorm weight <-> gamma, ...); a pair that the file lists owns its whole
subtree (MindSpore's BatchNorm3d keeps its parameters in a child `bn2d`), a name it does not list, and
every name in a pair it does not know, pairs with the same name. torch wrappers listed there
(checkpoint_wrapper's `_checkpoint_wrapped_module`, ...) add no path component.

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

import difflib
import inspect
import math
import sys
from dataclasses import dataclass, field
from typing import Any, NamedTuple

import numpy as np

from recompat import mappings as _mappings

TORCH, MINDSPORE = "torch", "mindspore"
_LABEL = {TORCH: "torch", MINDSPORE: "MindSpore"}

ADVICE = (
    "What to do: give both models the same structure and attribute names (the indices of torch's "
    "Sequential/ModuleList and MindSpore's SequentialCell/CellList count the same way, parameter-free layers "
    "included), make each paired layer hold the same tensors with the same shapes, or, where two layer classes name "
    "their parameters differently, add the pair to mappings/parameters.yaml. "
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
    shape: tuple          # torch's shape (MindSpore's differs only by a layout in parameters.yaml)


class Skipped(NamedTuple):
    name: str
    framework: str        # "torch" | "mindspore": the side the tensor is on
    reason: str


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
    warnings: list[str] = field(default_factory=list)
    buffers: list[str] = field(default_factory=list)            # torch names of paired buffers (not parameters)
    ms_parameter_names: dict[str, str] = field(default_factory=dict)   # MindSpore path -> Parameter.name
    copied: bool = False

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
            tree.add(path, parent, cell, slots)
        children = getattr(cell, "_cells", None)
        children = children.items() if children is not None else cell.name_cells().items()
        for name, child in children:
            if child is not None:
                visit(child, _join(path, name), path, stack)

    visit(root, "", None, ())
    return tree


# --------------------------------------------------------------------------------------------------------------
# layer pairs and their settings

_MATCH_CACHE: dict = {}


def _layer_pair(tcls, mcls, layers):
    key = (tcls, mcls, id(layers))
    if key not in _MATCH_CACHE or _MATCH_CACHE[key][0] is not layers:
        best = None
        for layer in layers:
            T, M = _classes(layer.torch), _classes(layer.mindspore)
            if T is None or M is None or not issubclass(tcls, T) or not issubclass(mcls, M):
                continue
            score = tcls.__mro__.index(T) + mcls.__mro__.index(M)
            if best is None or score < best[0]:
                best = (score, layer)
        _MATCH_CACHE[key] = (layers, best[1] if best else None)
    return _MATCH_CACHE[key][1]


def _known_counterparts(cls, side: str, layers) -> list[str]:
    """The classes mappings/parameters.yaml pairs with `cls` (a torch class when side is torch)."""
    out = []
    for layer in layers:
        mine, other = (layer.torch, layer.mindspore) if side == TORCH else (layer.mindspore, layer.torch)
        C = _classes(mine)
        if C is not None and issubclass(cls, C):
            out.append(other.rsplit(".", 1)[-1] if other.startswith(("torch.nn.", "mindspore.nn."))
                       else other.replace("mindspore.", "").replace("torch.", ""))
    return out


def _fmt(v) -> str:
    if isinstance(v, _Text):
        return str(v)
    if isinstance(v, float):
        return f"{v:.6g}"
    if isinstance(v, tuple):
        return "(" + ", ".join(_fmt(x) for x in v) + ("," if len(v) == 1 else "") + ")"
    return repr(v)


class _Text(str):
    """Already formatted for a message."""


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


def _torch_pads(t) -> list[tuple[int, int]]:
    n = len(t.kernel_size)
    if t.padding == "valid":
        return [(0, 0)] * n
    if t.padding == "same":
        totals = [d * (k - 1) for d, k in zip(_as_tuple(t.dilation, n), t.kernel_size)]
        return [(tot // 2, tot - tot // 2) for tot in totals]
    return [(p, p) for p in _as_tuple(t.padding, n)]


def _ms_pads(m, n: int) -> list[tuple[int, int]] | None:
    """MindSpore's padding per spatial axis (last n), None where it depends on the input size."""
    mode = str(m.pad_mode).lower()
    if mode == "valid":
        return [(0, 0)] * n
    if mode == "same":
        if any(s != 1 for s in _as_tuple(m.stride, n)[-n:]):
            return None
        ks, ds = _as_tuple(m.kernel_size, n)[-n:], _as_tuple(m.dilation, n)[-n:]
        totals = [d * (k - 1) for d, k in zip(ds, ks)]
        return [(tot // 2, tot - tot // 2) for tot in totals]
    if mode == "pad":
        if isinstance(m.padding, int):
            return [(m.padding, m.padding)] * n
        flat = tuple(m.padding)[-2 * n:]
        return [(flat[2 * i], flat[2 * i + 1]) for i in range(n)]
    return None


def _conv_padding(h, t, m):
    """(equal, what MindSpore's setting means in torch's terms, MindSpore's setting shown, advice)."""
    n = len(t.kernel_size)
    tp, mp = _torch_pads(t), _ms_pads(m, n)
    mode = getattr(t, "padding_mode", "zeros")
    shown = _Text(f"pad_mode={m.pad_mode!r}, padding={_fmt(m.padding)}")
    meaning = ("pads by the input size (TensorFlow-style 'same' with stride > 1)" if mp is None
               else "pads " + ", ".join(f"{a}/{b}" for a, b in mp) + " (before/after per axis)")
    equal = mp is not None and mode == "zeros" and mp == tp
    if mode != "zeros":
        advice = (f"MindSpore's {type(m).__name__} pads with zeros only: pad the input yourself "
                  f"(ops.pad(..., mode='{mode}')) and use pad_mode='valid'")
    elif all(p == (0, 0) for p in tp):
        advice = "construct it with pad_mode='valid'"
    elif len({x for pair in tp for x in pair}) == 1:
        advice = f"construct it with pad_mode='pad', padding={tp[0][0]}"
    else:
        advice = f"construct it with pad_mode='pad', padding={_fmt(tuple(x for pair in tp for x in pair))}"
    return equal, meaning, shown, advice


def _axes(n: int) -> str:
    return "the last axis" if n == 1 else f"the last {n} axes"


def _argument(h, value):
    """torch's value as MindSpore's constructor argument (the `argument` rule of the hyperparameter)."""
    if h.argument == "one_minus":
        return 1 - value
    if h.argument == "negative_length":
        return -len(value)
    if h.argument == "map":
        return _Text(h.arguments[str(value)])
    return value


def _check_setting(h, t, m, path: str) -> str | None:
    """A warning sentence when torch's and MindSpore's values of one setting differ, else None."""
    try:
        tv = getattr(t, h.torch)
        mv = _getattr_path(m, h.attribute)
    except AttributeError:
        return None
    tname, mname = type(t).__name__, type(m).__name__
    layer = f"{tname} '{path or '(root)'}'"
    if h.convention == "conv_padding":
        equal, meaning, shown, advice = _conv_padding(h, t, m)
        if equal:
            return None
        mode = getattr(t, "padding_mode", "zeros")
        tshown = f"padding={_fmt(tv)}" + (f", padding_mode={mode!r}" if mode != "zeros" else "")
        return (f"{layer}: torch {tshown} pads " + ", ".join(f"{a}/{b}" for a, b in _torch_pads(t))
                + f" (before/after per axis), but the paired MindSpore {mname} has {shown}, which {meaning}: "
                  f"{advice}. Results differ even with equal weights.")
    if h.convention == "one_minus":
        ms_torch = 1 - mv if _number(mv) else mv
        equal = _equal(tv, ms_torch)
    elif h.convention == "trailing":
        n = len(tv) if isinstance(tv, (tuple, list)) else 1
        ms_torch = tuple(_as_tuple(mv, n)[-n:])
        equal = _equal(tuple(_as_tuple(tv, n)), ms_torch)
    elif h.convention == "trailing_axes":
        ms_torch = -mv if isinstance(mv, int) and mv < 0 else None
        equal = ms_torch is not None and ms_torch == len(tv)
    else:
        ms_torch = mv
        equal = _equal(tv, mv)
    if equal:
        return None
    try:
        expected = _argument(h, tv)
    except (TypeError, KeyError):
        expected = None
    if h.convention in ("same", "one_minus") and h.argument in ("same", "one_minus", "map"):
        try:
            actual = _argument(h, ms_torch)
        except (TypeError, KeyError):
            actual = mv
    else:
        actual = mv
    default = " (MindSpore's default)" if h.mindspore_default is not None and _fmt(actual) == h.mindspore_default \
        else ""
    if h.convention == "trailing_axes":
        meaning = f"covers {_axes(ms_torch)}" if ms_torch is not None else f"starts at axis {mv}"
        what = f"torch {h.torch}={_fmt(tv)} covers {_axes(len(tv))}"
        got = f"{h.mindspore}={_fmt(actual)}{default}, which {meaning}"
    else:
        what = f"torch {h.torch}={_fmt(tv)}"
        got = f"{h.mindspore}={_fmt(actual)}{default}"
        if not _equal(actual, ms_torch) and h.convention != "trailing":
            got += f", i.e. {h.torch}={_fmt(ms_torch)} in torch's terms"
    why = f" ({h.why})" if h.why else ""
    fix = (f"construct it with {h.mindspore}={_fmt(expected)}" if expected is not None
           else f"MindSpore's {mname} has no equivalent of {h.torch}={_fmt(tv)}")
    return f"{layer}: {what}, but the paired MindSpore {mname} has {got}{why}: {fix}. " \
           f"Results differ even with equal weights."


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

    p.set_data(mindspore.Tensor(arr.reshape(p.shape), dtype=p.dtype))


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


def transfer_weights(src, dst, *, strict: bool = True, mappings=None) -> Transfer:
    """Copy every parameter and buffer of `src` into `dst` (a torch nn.Module and a MindSpore nn.Cell, either
    order), pairing modules by path and names through mappings/parameters.yaml. Raises WeightTransferError
    listing every unmatched tensor and shape mismatch (strict=True), or reports them in the Transfer."""
    tmodel, mmodel, direction = _sides(src, dst)
    params = (mappings or _mappings.default()).parameters
    tt, mt = _torch_tree(tmodel, params.wrappers), _ms_tree(mmodel)
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

        layer = _layer_pair(type(t), type(m), params.layers)
        if layer is not None:
            consumed.add(path)
            tslots = [s for p in tt.descendants(path) for s in tt.own[p]]
            mslots = [s for p in mt.descendants(path) for s in mt.own[p]]
        else:
            tslots, mslots = list(tt.own[path]), list(mt.own[path])
            tknown = _known_counterparts(type(t), TORCH, params.layers)
            mknown = _known_counterparts(type(m), MINDSPORE, params.layers)
            if tknown and mknown:
                result.warnings.append(
                    f"torch {type(t).__name__} '{path or '(root)'}' is paired with MindSpore {type(m).__name__}: "
                    f"mappings/parameters.yaml pairs torch {type(t).__name__} with {' / '.join(tknown)}; "
                    f"their tensors were paired by equal names")
        for s in (*tslots, *mslots):
            s.rel = _relative(s, path)
        _pair_layer(path, t, m, layer, tslots, mslots, result, unmatched, candidates)
        if layer is not None:
            for h in layer.hyperparameters:
                w = _check_setting(h, t, m, path)
                if w:
                    result.warnings.append(w)

    _finish(result, unmatched, candidates, tt, mt)

    if result.problems and strict:
        raise WeightTransferError(_message(result), result)
    _copy(result, candidates)
    return result


def _relative(s: _Slot, path: str) -> str:
    """The slot's name relative to the paired layer at `path` (normalized paths, wrapper prefixes dropped)."""
    full = _join(s.node, s.key)
    return full[len(path) + 1:] if path else full


def _pair_layer(path, t, m, layer, tslots, mslots, result, unmatched, candidates):
    """Pair the tensors of one pair of layers by name (through the layer pair, else the same name)."""
    by_t = {p.torch: p for p in (layer.params if layer else ()) if p.torch is not None}
    by_m = {p.mindspore: p for p in (layer.params if layer else ()) if p.mindspore is not None}
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
                                 if s.tensor is not None}


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
