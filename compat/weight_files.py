"""Weight files from one framework to the other: torch state dicts (.pt, .pth, .bin, .safetensors) to MindSpore
checkpoints (.ckpt), and back.

    report = convert_file("model.pt", "model.ckpt", model=net)     # net: the translated Cell (or the torch original)
    recompat weights model.pt -o model.ckpt --model mynet_ms:Net(num_classes=10)

Why a model. A file's keys do not say which layer holds a tensor: a LayerNorm's `weight`/`bias` and a Linear's, or
a module's own Parameters, are spelled alike, and only the LayerNorm's become `gamma`/`beta` on MindSpore. So the
names come from the model the weights are for, on either side: each of its layers is matched with the layer pairs of
mappings/ (their `tensors`, the facts transfer_weights uses) by its own class, and each of its tensors gets the key
the other framework writes for it. Nothing is guessed.

What is checked. Every key of the file is used, or dropped for the reason its layer pair gives (torch's
`num_batches_tracked`); every tensor of the model is found in the file, or filled from the model for that reason;
shapes agree through the pair's layout (MindSpore's Conv1d weight has an axis of 1 more); a tensor the model shares
at two paths gets one value. Any problem: nothing is written, and every problem is listed.

What is kept. Values bit for bit and each tensor's dtype as the file holds it (bfloat16 included); a dtype that
differs from the model's is a warning, as loading converts it. The output is written whole or not at all.
"""
from __future__ import annotations

import ast
import difflib
import importlib
import importlib.util
import os
import struct
import sys
from collections import OrderedDict
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np

from recompat import _files
from recompat import mappings as _mappings
from recompat.compat import weights as _weights

TORCH, MINDSPORE = _weights.TORCH, _weights.MINDSPORE
LABEL = {TORCH: "torch", MINDSPORE: "MindSpore"}

# what a file's extension says it holds
FORMATS = {".pt": TORCH, ".pth": TORCH, ".bin": TORCH, ".safetensors": TORCH, ".ckpt": MINDSPORE}


class WeightFileError(Exception):
    """A file or a model that cannot be read or used; the message names it and says what to do."""


@dataclass
class Weights:
    """The tensors of one file: NumPy arrays by key, and each one's dtype as the framework spells it (a bfloat16
    array is held as float32, which is exact)."""
    path: Path
    framework: str
    arrays: dict[str, np.ndarray]
    dtypes: dict[str, str]
    notes: list[str] = field(default_factory=list)


@dataclass
class Report:
    """What convert_file did, or would have done."""
    source: Path
    destination: Path | str           # a file, or the words for the model the arrays went to (convert())
    direction: str                                     # "torch->mindspore" | "mindspore->torch"
    model: str = ""                                    # the model's class, as named in the messages
    pairs: list[tuple[str, str]] = field(default_factory=list)      # (source key, destination key), in order
    dropped: list[tuple[str, str]] = field(default_factory=list)    # (source key, why)
    filled: list[tuple[str, str]] = field(default_factory=list)     # (destination key, why): the model's value
    problems: list[str] = field(default_factory=list)
    warnings: list[str] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)
    written: bool = False

    @property
    def ok(self) -> bool:
        return not self.problems

    @property
    def renamed(self) -> int:
        return sum(s != d for s, d in self.pairs)

    def text(self) -> str:
        frm, to = (LABEL[s] for s in self.direction.split("->"))
        head = (f"{self.source} ({frm}) -> {self.destination} ({to}), names from {self.model}: "
                f"{len(self.pairs)} tensors ({self.renamed} renamed), {len(self.dropped)} dropped, "
                f"{len(self.filled)} filled from the model, {len(self.problems)} problems")
        lines = [head]
        lines += [f"  problem: {p}" for p in self.problems]
        lines += [f"  dropped: '{k}': {why}" for k, why in self.dropped]
        lines += [f"  filled: '{k}': {why}" for k, why in self.filled]
        lines += [f"  warning: {w}" for w in self.warnings]
        lines += [f"  note: {n}" for n in self.notes]
        lines.append(f"wrote {self.destination}" if self.written else "nothing was written")
        return "\n".join(lines)


# --------------------------------------------------------------------------------------------------------------
# files

def file_framework(path: str | os.PathLike) -> str:
    """The framework whose file `path` is, by its extension; WeightFileError for any other."""
    ext = Path(path).suffix.lower()
    if ext not in FORMATS:
        raise WeightFileError(f"{path}: not a weight file recompat knows by its extension ({_known()})")
    return FORMATS[ext]


def _known() -> str:
    return ", ".join(f"{e} ({LABEL[f]})" for e, f in FORMATS.items())


def sniff(path: str | os.PathLike) -> str | None:
    """What a file holds, by its first bytes: "torch" (torch.save's zip archive or its older pickle),
    "safetensors", or None (anything else: MindSpore's .ckpt is a protocol buffer, which has no signature)."""
    with open(path, "rb") as f:
        head = f.read(16)
        size = os.fstat(f.fileno()).st_size
    if head[:4] == b"PK\x03\x04" or head[:1] == b"\x80":
        return "torch"
    if len(head) >= 9 and head[8:9] == b"{" and 0 < struct.unpack("<Q", head[:8])[0] <= size - 8:
        return "safetensors"
    return None


def read(path: str | os.PathLike, key: str | None = None) -> Weights:
    """The tensors of a weight file. `key`: the entry of a torch file that holds the state dict, where the file
    holds a training checkpoint (a dict of a model's, an optimizer's, ...)."""
    path = Path(path)
    framework = file_framework(path)
    if not path.is_file():
        raise WeightFileError(f"{path}: no such file")
    held = sniff(path)
    ext = path.suffix.lower()
    if ext == ".ckpt" and held is not None:
        raise WeightFileError(f"{path}: named .ckpt, but it holds a {held} file (torch.save writes what starts as "
                              f"it does): rename it to .pt (or .safetensors) and convert it to MindSpore's with "
                              f"`recompat weights {path.with_suffix('.pt' if held == 'torch' else '.safetensors')} "
                              f"-o {path} --model module:Class`")
    if ext == ".safetensors":
        return _read_safetensors(path)
    if framework == TORCH:
        if held is None:
            raise WeightFileError(f"{path}: named {ext}, but it is no file torch.save writes (a MindSpore .ckpt? "
                                  f"then name it .ckpt)")
        return _read_torch(path, key)
    return _read_mindspore(path)


def _read_torch(path: Path, key: str | None) -> Weights:
    import pickle

    import torch

    try:
        obj = torch.load(path, map_location="cpu", weights_only=True)
    except pickle.UnpicklingError as exc:
        raise WeightFileError(
            f"{path}: holds Python objects besides tensors (a whole module saved with torch.save(model)?), which "
            f"recompat does not unpickle, as that runs code from the file. Load it in torch and save "
            f"model.state_dict() instead. torch said: {str(exc).splitlines()[0]}") from None
    except (RuntimeError, EOFError, OSError) as exc:
        raise WeightFileError(f"{path}: torch cannot read it: {exc}") from None
    notes: list[str] = []
    state = _state_dict(path, obj, key, notes)
    arrays, dtypes = {}, {}
    for k, t in state.items():
        arrays[k], dtypes[k] = _weights._torch_array(t), str(t.dtype).replace("torch.", "")
    return Weights(path, TORCH, arrays, dtypes, notes)


def _is_tensor_dict(obj) -> bool:
    import torch

    return isinstance(obj, dict) and bool(obj) and all(isinstance(v, torch.Tensor) for v in obj.values())


def _state_dict(path: Path, obj, key: str | None, notes: list[str]) -> dict:
    """The state dict in what torch.load returned: the object itself, or the one entry of a training checkpoint
    that is a dict of tensors (or the entry `key` names)."""
    if not isinstance(obj, dict):
        raise WeightFileError(f"{path}: holds a {type(obj).__name__}, not a state dict (a dict of tensors)")
    if key is not None:
        if not _is_tensor_dict(obj.get(key)):
            entries = ", ".join(repr(k) for k in obj) or "none"
            raise WeightFileError(f"{path}: has no entry {key!r} that is a dict of tensors (its entries: {entries})")
        notes.append(f"took the entry {key!r} of the file; the others are not converted: "
                     + ", ".join(repr(k) for k in obj if k != key))
        return obj[key]
    if _is_tensor_dict(obj):
        return obj
    inner = [k for k, v in obj.items() if _is_tensor_dict(v)]
    if len(inner) == 1:
        notes.append(f"the file is a training checkpoint: took its entry {inner[0]!r}; the others are not weights "
                     f"of the model and are not converted: " + ", ".join(repr(k) for k in obj if k != inner[0]))
        return obj[inner[0]]
    if not inner:
        raise WeightFileError(f"{path}: holds no state dict (no dict of tensors among its entries: "
                              + ", ".join(repr(k) for k in obj) + ")")
    raise WeightFileError(f"{path}: holds several dicts of tensors ({', '.join(repr(k) for k in inner)}): name the "
                          f"model's with --key")


def _read_safetensors(path: Path) -> Weights:
    from safetensors import SafetensorError
    from safetensors.torch import load_file

    try:
        state = load_file(str(path))
    except (SafetensorError, OSError) as exc:
        raise WeightFileError(f"{path}: safetensors cannot read it: {exc}") from None
    return Weights(path, TORCH, {k: _weights._torch_array(t) for k, t in state.items()},
                   {k: str(t.dtype).replace("torch.", "") for k, t in state.items()})


def _read_mindspore(path: Path) -> Weights:
    import mindspore

    try:
        state = mindspore.load_checkpoint(str(path))
    except (ValueError, RuntimeError, OSError, TypeError) as exc:
        raise WeightFileError(f"{path}: MindSpore cannot read it as a checkpoint: {exc}") from None
    arrays, dtypes = {}, {}
    for k, p in state.items():
        arrays[k], dtypes[k] = _weights._ms_array(p), str(p.dtype).lower()
    return Weights(path, MINDSPORE, arrays, dtypes)


def write(path: str | os.PathLike, arrays: dict[str, np.ndarray], dtypes: dict[str, str]) -> None:
    """Write the tensors as the file `path`'s extension says, whole or not at all, each in its dtype."""
    path = Path(path)
    if file_framework(path) == MINDSPORE:
        import mindspore

        def save(tmp: str) -> None:
            items = []
            for k, a in arrays.items():
                t = mindspore.Tensor(a)
                want = getattr(mindspore, dtypes[k])
                items.append({"name": k, "data": t if t.dtype == want else t.astype(want)})
            mindspore.save_checkpoint(items, tmp)
    else:
        import torch

        state = OrderedDict((k, torch.from_numpy(np.ascontiguousarray(a)).to(getattr(torch, dtypes[k])))
                            for k, a in arrays.items())

        def save(tmp: str) -> None:
            if path.suffix.lower() == ".safetensors":
                from safetensors.torch import save_file

                save_file(state, tmp, metadata={"format": "pt"})
            else:
                torch.save(state, tmp)
    _files.write_atomic_with(path, save, suffix=path.suffix)


# --------------------------------------------------------------------------------------------------------------
# names, from the model

@dataclass
class _Name:
    """One tensor of the model: its key in the model side's file and in the other side's."""
    mine: str                   # its key in the model's framework: state_dict()'s (MindSpore's: the path)
    other: str | None           # the key the other framework writes; None: no counterpart (`why`)
    shape: tuple                # the model's shape
    other_shape: tuple          # the shape on the other side (the pair's layout)
    dtype: str
    why: str = ""
    value: object = None        # the model's tensor (for a value the file lacks)
    fixed: bool = False         # a MindSpore Parameter that takes no gradient (a statistic, or affine=False's)


def _pair_entries(cls, side: str, maps) -> list:
    """The layer pairs whose class on `side` is the most specific base of `cls`, one per distinct `tensors`.
    The entries (what translation writes) come first; parameters.yaml's pairs with no entry (mint's layers) only
    where no entry pairs the class."""
    for layers in ([e for e in maps.entries if e.tensors is not None], maps.layers):
        best: dict = {}
        for layer in layers:
            C = _weights._classes(layer.torch["api"] if side == TORCH else layer.mindspore["api"])
            if C is not None and issubclass(cls, C):
                best.setdefault(cls.__mro__.index(C), []).append(layer)
        if best:
            found = best[min(best)]
            distinct = {tuple((p.torch, p.mindspore, p.insert_axis) for p in e.tensors or ()): e for e in found}
            return list(distinct.values())
    return []


def model_names(model, maps=None) -> tuple[str, list[_Name], list[tuple[str, str]], list[str], list[str]]:
    """The model's side, each of its tensors with its keys on both sides, the other side's keys its layer pairs
    drop (key, why), problems (a layer whose pairs disagree) and notes."""
    side = _side(model)
    maps = maps or _mappings.default()
    tree = _weights._torch_tree(model, maps.wrappers) if side == TORCH else _weights._ms_tree(model)
    other_side = MINDSPORE if side == TORCH else TORCH
    names: list[_Name] = []
    dropped: list[tuple[str, str]] = []
    problems: list[str] = []
    consumed: list[str] = []
    for path, node in tree.nodes.items():
        if any(path == c or path.startswith(c + ".") for c in consumed):
            continue
        entries = _pair_entries(type(node), side, maps)
        if len(entries) > 1:
            problems.append(f"{LABEL[side]} {type(node).__name__} '{path or '(root)'}' is paired with "
                            + " and ".join(e.torch["api"] if side == MINDSPORE else e.mindspore["api"]
                                           for e in entries)
                            + f" in mappings/, which name its tensors differently: give the {LABEL[other_side]} "
                              f"model instead, whose class says which")
        entry = entries[0] if entries else None
        if entry is not None:
            consumed.append(path)
            slots = [s for p in tree.descendants(path) for s in tree.own[p]]
        else:
            slots = list(tree.own[path])
        pairs = {getattr(p, side): p for p in (entry.tensors if entry else ()) if getattr(p, side) is not None}
        for p in (entry.tensors if entry else ()):
            if getattr(p, side) is None:
                dropped.append((_weights._join(path, getattr(p, other_side)), p.why))
        for s in slots:
            if s.tensor is None or (s.buffer and not s.persistent):
                continue
            rel = _weights._relative(s, path)
            tp = pairs.get(rel)
            other = rel if tp is None else getattr(tp, other_side)
            mine = s.name        # torch: its state_dict() key; MindSpore: its path, Cell.state_dict()'s key
            shape = tuple(s.shape)
            axis = tp.insert_axis if tp is not None else None
            if axis is None:
                other_shape = shape
            elif side == TORCH:
                other_shape = shape[:axis] + (1,) + shape[axis:]
            else:
                other_shape = shape[:axis] + shape[axis + 1:]
            names.append(_Name(mine, None if other is None else _weights._join(path, other), shape, other_shape,
                               s.dtype, tp.why if tp is not None and other is None else "", s.tensor,
                               fixed=side == MINDSPORE and not s.trainable and not s.buffer))
    notes = []
    renamed = [(s.name, s.tensor.name) for slots in tree.own.values() for s in slots
               if side == MINDSPORE and s.tensor is not None and not s.buffer and s.tensor.name != s.name]
    if renamed:
        notes.append(f"{len(renamed)} of the model's Parameters are named otherwise than their path (e.g. "
                     f"'{renamed[0][1]}' at '{renamed[0][0]}'): the file is keyed by path, as Cell.state_dict() is; "
                     f"load it with model.load_state_dict(mindspore.load_checkpoint(file)), not load_param_into_net, "
                     f"which matches Parameter names")
    return side, names, dropped, problems, notes


def _side(model) -> str:
    torch = sys.modules.get("torch")
    if torch is not None and isinstance(model, torch.nn.Module):
        return TORCH
    mindspore = sys.modules.get("mindspore")
    if mindspore is not None and isinstance(model, mindspore.nn.Cell):
        return MINDSPORE
    raise WeightFileError(f"the model is a {type(model).__name__}: give a torch nn.Module or a MindSpore nn.Cell "
                          f"(the model the weights are for, on either side)")


def _model_value(name: _Name) -> np.ndarray:
    t = name.value
    return _weights._torch_array(t) if hasattr(t, "detach") else _weights._ms_array(t)


# --------------------------------------------------------------------------------------------------------------
# the conversion

def convert_file(source, destination, model, *, key: str | None = None, mappings=None) -> Report:
    """Convert the weight file `source` into `destination` (the other framework's format, by its extension), with
    the keys `model` (the model the weights are for, a torch nn.Module or a MindSpore nn.Cell) gives. Returns the
    Report; with problems, nothing is written (Report.written is False)."""
    source, destination = Path(source), Path(destination)
    frm, to = file_framework(source), file_framework(destination)
    if frm == to:
        raise WeightFileError(f"{source} and {destination} are both {LABEL[frm]} files: give the other framework's "
                              f"extension to the output ({_known()})")
    if destination.resolve() == source.resolve():
        raise WeightFileError(f"{destination}: the output would replace the input; give another name")
    if not destination.parent.is_dir():
        raise WeightFileError(f"{destination.parent}: no such folder for the output")
    report, out, dtypes = convert(source, model, key=key, mappings=mappings, destination=destination)
    if report.ok:
        write(destination, out, dtypes)
        report.written = True
    return report


def convert(source, model, *, key: str | None = None, mappings=None,
            destination: Path | str = "memory") -> tuple[Report, dict[str, np.ndarray], dict[str, str]]:
    """What convert_file writes, without writing it: the Report, and the arrays and their dtypes by the other
    framework's keys (only where the Report is ok). ``destination`` only names the output in the Report."""
    source = Path(source)
    frm = file_framework(source)
    to = MINDSPORE if frm == TORCH else TORCH
    weights = read(source, key)
    side, names, dropped_keys, problems, notes = model_names(model, mappings)
    report = Report(source, destination, f"{frm}->{to}", model=f"{LABEL[side]} {type(model).__name__}",
                    problems=list(problems), notes=[*weights.notes, *notes])
    out, dtypes = _plan(weights, side == frm, names, dict(dropped_keys), report)
    return report, out, dtypes


def _plan(weights: Weights, model_is_source: bool, names: list[_Name], drops: dict[str, str], report: Report):
    """Pair the file's keys with the model's names; fill the report; the arrays and dtypes to write."""
    out: dict[str, np.ndarray] = {}
    dtypes: dict[str, str] = {}
    n_before = len(report.problems)
    used: set[str] = set()
    missing: list[_Name] = []
    first_key: dict[int, str] = {}           # the model's tensor -> the first source key that gave it
    owner: dict[str, int] = {}               # destination key -> the model's tensor written there
    for n in names:
        src, dst = (n.mine, n.other) if model_is_source else (n.other, n.mine)
        src_shape, dst_shape = (n.shape, n.other_shape) if model_is_source else (n.other_shape, n.shape)
        if dst is None:                              # the destination has no counterpart: the source key is dropped
            if src in weights.arrays:
                used.add(src)
                report.dropped.append((src, n.why))
            continue
        if src is None:                              # the source has none: the model's value stands
            if dst not in out:
                out[dst], dtypes[dst] = _model_value(n), n.dtype
                report.filled.append((dst, n.why))
            continue
        if src not in weights.arrays:
            if dst in out:
                continue
            if n.fixed and not model_is_source and weights.framework == TORCH:
                out[dst], dtypes[dst] = _model_value(n), n.dtype      # torch registers it as None
                report.filled.append((dst, f"the file has no '{src}': torch registers it as None (affine=False, "
                                           f"track_running_stats=False), where MindSpore keeps a fixed Parameter"))
                continue
            missing.append(n)
            continue
        used.add(src)
        a = weights.arrays[src]
        if tuple(a.shape) != src_shape:
            report.problems.append(f"'{src}' is {_shape(a.shape)} in the file, but the model's tensor "
                                   f"'{n.mine}' needs {_shape(src_shape)}" + (
                                       f" (written as {_shape(dst_shape)})" if dst_shape != src_shape else ""))
            continue
        first = first_key.setdefault(id(n.value), src)     # one tensor of the model, at two paths or more
        if first != src and not np.array_equal(weights.arrays[first], a, equal_nan=True):
            report.problems.append(f"'{first}' and '{src}' are one tensor of the model ('{n.mine}'), but the file "
                                   f"holds different values for them")
            continue
        if dst in out:
            if owner[dst] != id(n.value):
                report.problems.append(f"'{src}' and the key written before it would both be written as '{dst}': "
                                       f"two tensors of the model under one key")
            continue
        out[dst], dtypes[dst], owner[dst] = a.reshape(dst_shape), weights.dtypes[src], id(n.value)
        report.pairs.append((src, dst))
        if not model_is_source and weights.dtypes[src] != n.dtype:
            report.warnings.append(f"'{src}' is {weights.dtypes[src]} in the file, the model's '{dst}' "
                                   f"{n.dtype}: written as {weights.dtypes[src]} (loading converts it)")
    for k, why in drops.items():
        if model_is_source:                          # a key the destination has and this model does not
            report.notes.append(f"not written: '{k}': {why}")
        elif k in weights.arrays and k not in used:
            used.add(k)
            report.dropped.append((k, why))
    left = [k for k in weights.arrays if k not in used]
    for n in missing:
        src = n.mine if model_is_source else n.other
        same = [k for k in left if weights.arrays[k].shape == (n.shape if model_is_source else n.other_shape)]
        close = difflib.get_close_matches(src, same, n=1, cutoff=0.5)
        report.problems.append(f"the model's tensor '{n.mine}' {_shape(n.shape)} has no key '{src}' in the file"
                               + (f"; the closest unused key of that shape: '{close[0]}'" if close else ""))
    expected = [(n.mine if model_is_source else n.other) for n in names]
    for k in left:
        close = difflib.get_close_matches(k, [e for e in expected if e is not None and e not in used], n=1,
                                          cutoff=0.5)
        report.problems.append(f"the file's key '{k}' {_shape(weights.arrays[k].shape)} is no tensor of the model"
                               + (f"; the closest one it lacks: '{close[0]}'" if close else ""))
    if len(report.problems) > n_before:
        report.problems.append(f"What to do: give the model the weights are for, built as they were trained "
                               f"(its class and arguments); {report.model} does not hold what the file holds.")
    return out, dtypes


def _shape(shape) -> str:
    return "(" + ", ".join(str(d) for d in shape) + ("," if len(shape) == 1 else "") + ")"


# --------------------------------------------------------------------------------------------------------------
# the model a command line names

def build_model(spec: str):
    """The model `spec` names: `module:Name` or `path/to/file.py:Name`, where Name is a class or function called
    with no arguments, a call with literal arguments (`Net(3, num_classes=10)`), or a model object."""
    where, sep, expr = spec.rpartition(":")
    if not sep or not where or not expr:
        raise WeightFileError(f"--model {spec!r}: give module:Class or path/to/file.py:Class (with its arguments "
                              f"if it needs any: 'mynet:Net(3, num_classes=10)')")
    try:
        node = ast.parse(expr.strip(), mode="eval").body
    except SyntaxError:
        raise WeightFileError(f"--model {spec!r}: {expr!r} is no name or call") from None
    call = node if isinstance(node, ast.Call) else None
    target = call.func if call else node
    dotted = ast.unparse(target)
    if not all(part.isidentifier() for part in dotted.split(".")):
        raise WeightFileError(f"--model {spec!r}: {dotted!r} is no name")
    try:
        args = [ast.literal_eval(a) for a in call.args] if call else []
        kwargs = {k.arg: ast.literal_eval(k.value) for k in call.keywords} if call else {}
    except ValueError:
        raise WeightFileError(f"--model {spec!r}: the arguments must be literals (numbers, strings, tuples, lists, "
                              f"dicts, True/False/None)") from None
    if call and any(k.arg is None for k in call.keywords):
        raise WeightFileError(f"--model {spec!r}: write the keywords out (no **)")
    module = _import(where, spec)
    obj = module
    for part in dotted.split("."):
        if not hasattr(obj, part):
            raise WeightFileError(f"--model {spec!r}: {module.__name__} has no {dotted!r}")
        obj = getattr(obj, part)
    if callable(obj) and (call or isinstance(obj, type)):
        try:
            return obj(*args, **kwargs)
        except Exception as exc:           # the user's own code: say where, keep its message
            raise WeightFileError(f"--model {spec!r}: building it failed: {type(exc).__name__}: {exc}") from exc
    if call:
        raise WeightFileError(f"--model {spec!r}: {dotted!r} is not callable")
    return obj


def _import(where: str, spec: str):
    if where.endswith(".py") or os.sep in where or "/" in where:
        path = Path(where)
        if not path.is_file():
            raise WeightFileError(f"--model {spec!r}: {path}: no such file")
        folder = str(path.resolve().parent)
        if folder not in sys.path:
            sys.path.insert(0, folder)        # its own imports of files beside it
        name = f"recompat_model_{path.stem}"
        loaded = importlib.util.spec_from_file_location(name, path)
        module = importlib.util.module_from_spec(loaded)
        sys.modules[name] = module
        try:
            loaded.loader.exec_module(module)
        except Exception as exc:
            raise WeightFileError(f"--model {spec!r}: importing {path} failed: {type(exc).__name__}: {exc}") from exc
        return module
    if "" not in sys.path and os.getcwd() not in sys.path:
        sys.path.insert(0, os.getcwd())        # `recompat weights` run where the model's package is
    try:
        return importlib.import_module(where)
    except ImportError as exc:
        raise WeightFileError(f"--model {spec!r}: cannot import {where!r}: {exc} (run recompat where the module "
                              f"is importable, or give its file: path/to/file.py:Class)") from exc
