"""Domain probes: each function, Tensor-method and layer entry tried over the inputs real code passes, through the
translator, on both frameworks; and each agreeing row of the official mapping table that no entry takes, as the
row's own call (:class:`RowPair`).

An entry's paired example proves it on one call. A domain probe tries the entry's torch API over its domain, the
parts of which are generated from the recorded torch signature and mappings/table/probes.yaml (the specs the
table's probes use): each dtype torch takes (float16/32/64, int32/64, bool, mixed where torch promotes), each
keyword form (a required value by keyword, each default's other value by keyword and by place, negative and tuple
dims), edge values (zeros and -0, negatives, infinities, NaN, a row all -inf, equal values, halves, exact 0 and 1,
very large and very small magnitudes, negative integers) and edge shapes (an empty and a size-1 dim). A part torch
refuses is outside the domain and is not recorded.

Each part is one case: a torch function of one call (``def case_3(t0): return t0.any(dim=-1)``); a layer's case
calls a layer built above it from one constructor form (``layer_3 = torch.nn.Linear(3, 4, bias=False)``), which on
MindSpore is given torch's weights (compat.weights), both in training mode, its parameters' gradients judged too.
The cases of an entry are one file, translated as a user's file is (``--scope model``, every core entry taken
for proven, so that what is probed is the entry's own translation; a table row's: the row's API put in place of
torch's), and run on the same inputs on both sides. A case is judged as
``compare()`` judges a tensor: outputs of the same number, shape and dtype; the same NaN and infinities at the
same places; integers and bools exactly; floating values by the round-off rule against torch's float64 run of the
same inputs (``compare.judge_by_reference``); then, where torch's output is floating, the gradients of a fixed
weighted sum of it with respect to the floating inputs, the same way. No tolerance is set per entry.

The outcome of a part: ``agrees``; ``less precise: what`` (beyond round-off, within LESS_PRECISE); ``differs: what``
(another value, NaN or infinity, dtype or shape: the first place and both values); ``raises: ...`` or ``no kernel:
...`` (MindSpore refuses the call, or has no kernel for it on this device: a loud failure, not a silent one); ``left
by hand: ...`` (the translator does not convert that form: no evidence either way). Each case runs twice on
MindSpore and keeps the worse outcome. :func:`probe_entry` gives an entry's outcomes; ``recompat prove`` records
them in mappings/domain.json (:func:`prove`), whose differing parts the loader reads into ``Entry.domain``.
"""
from __future__ import annotations

import ast
import copy
import dataclasses
import functools
import json
import math
import pickle
import re
import signal
import subprocess
import sys
import tempfile
import types
import warnings
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np

from recompat.compat.table import (SEED, _array, _as_dtype as table_dtype, _first_line, _flush, _no_kernel, _numpy,
                                   _other_value, _outputs, _weights, read_probes, resolve, retry_on_mindspore)
from recompat.mappings import DOMAIN_FILE, DOMAIN_WRONG, HERE as MAPPINGS, TABLE_RULES, signature_arguments

DOMAIN_RECORD = MAPPINGS / DOMAIN_FILE
KIND = "recompat-domain"
WORKER_TAG = "recompat-domain: "   # probe_all's worker's lines, among whatever MindSpore prints
RULES = ("api_function", "tensor_method", "api_class")   # the entries probed over a domain
DTYPES = ("float16", "float64", "int32", "int64", "bool")
# an outcome's kind is the word it starts with; what --check holds an entry to is its group (KIND_OF): a value
# within round-off or just beyond it, an error or a missing kernel, are one each (which of the two a run gives can
# turn on MindSpore's threads, or on an earlier op's error it leaves behind)
OUTCOMES = ("agrees", "less precise", "left by hand", "no kernel", "raises", "crashes", "differs")   # least to most severe
KIND_OF = {"agrees": "agrees", "less precise": "agrees", "left by hand": "left by hand", "no kernel": "raises",
           "raises": "raises", "crashes": "crashes", "differs": "differs"}
EMPTY = "an empty dim"   # the part whose MindSpore kernels leave state behind: judged last
# beyond round-off, but within this much of the tensor's largest value (float16's precision): "less precise", not
# "differs" (MindSpore's float32 exp is up to about 20 ulps from float64 where torch's is within one)
LESS_PRECISE = 2.0 ** -11


@dataclass(frozen=True)
class Case:
    part: str                                   # the part of the domain it stands for: "int64", "nan in input"
    call: str                                   # the torch call over the inputs t0, t1, ...; a layer's constructor
    tensors: tuple[np.ndarray, ...]             # what t0, t1, ... are given (what a layer is called on)
    layer: bool = False                         # a layer (torch.nn.X): built once from `call`, then called


@dataclass
class Domain:
    """An entry's outcomes over its domain."""
    entry: str
    api: str
    parts: dict[str, str] = field(default_factory=dict)   # part -> outcome
    reason: str = ""                                       # why it is not probed, where it is not
    mindspore: str = ""                                    # a table row's own pair (RowPair): the row's MindSpore API

    def differing(self) -> dict[str, str]:
        """The parts its counterpart is wrong on: another value, or the process killed (DOMAIN_WRONG)."""
        return {p: o for p, o in self.parts.items() if o.startswith(DOMAIN_WRONG)}

    def as_dict(self) -> dict:
        return {"api": self.api, **({"mindspore": self.mindspore} if self.mindspore else {}),
                **({"reason": self.reason} if self.reason else {}), "parts": self.parts}


ROW = "row:"   # the id of a table row's own pair: row:<torch API>


@dataclass(frozen=True)
class RowPair:
    """An agreeing row of the official mapping table whose pair of APIs no probed entry translates, probed as the
    row's own call: each case's torch call with the row's MindSpore API in its place, the same arguments (what
    `verify-table` calls), so that the table page's "agrees" covers the row's domain too."""
    id: str
    rule: str                   # api_function | tensor_method | api_class, as an entry's
    torch: dict                 # {"api", "signature"}
    mindspore: dict             # {"api"}


def row_pairs(maps, rows: dict | None = None) -> list[RowPair]:
    """The table's agreeing rows (`rows`: verify-table's record by torch API, default: the recorded one) of
    functions, Tensor methods and layers whose (torch, MindSpore) pair is no probed entry's."""
    import torch

    from recompat.compat.table import _signature_text, recorded as table_record, torch_signature

    rows = table_record() if rows is None else rows
    taken = {(e.torch["api"], e.mindspore.get("api")) for e in probed_entries(maps)}
    out = []
    for api, row in rows.items():
        ms_api = row.get("mindspore_api")
        if (row.get("verdict") != "agrees" or not ms_api or (api, ms_api) in taken
                or row.get("section") not in (*TABLE_RULES, "torch.nn")):
            continue
        fn, method = resolve(api), row["section"] == "torch.Tensor"
        params = torch_signature(fn, method) if fn is not None else None
        rule = ("api_class" if isinstance(fn, type) and issubclass(fn, torch.nn.Module)
                else "tensor_method" if method else "api_function")
        out.append(RowPair(ROW + api, rule, {"api": api, "signature": _signature_text(api.rsplit(".", 1)[1], params)
                                                         if params is not None else ""}, {"api": ms_api}))
    return out


def _row_call_text(text: str, pair: RowPair) -> str:
    """module_text's torch file as the row's call on MindSpore: the torch API replaced by the row's, the same
    arguments."""
    torch_api, ms_api = pair.torch["api"], pair.mindspore["api"]
    if pair.rule == "tensor_method":
        old, new = torch_api.rsplit(".", 1)[1], ms_api.rsplit(".", 1)[1]
        return text.replace(f"t0.{old}(", f"t0.{new}(").replace("import torch\n", "import mindspore\n", 1)
    text = re.sub(rf"(?<![\w.]){re.escape(torch_api)}(?=\()", ms_api, text)
    return text.replace("import torch\n", f"import {ms_api.rsplit('.', 1)[0]}\n", 1)


class NotProbed(Exception):
    """An entry whose domain cannot be generated (a required parameter no spec gives a value): the message says why."""


# -- the parts of a domain ---------------------------------------------------------------------------------------

def _edges(v: np.ndarray) -> dict[str, np.ndarray]:
    """Edge values in a floating input (float32), each class one array of the input's shape."""
    out = {}

    def planted(first: float, second: float | None = None) -> np.ndarray:
        """The input with its first value (and its second, where it has one) replaced."""
        w = v.copy().reshape(-1)
        w[0] = first
        if second is not None:
            w[1 % w.size] = second
        return w.reshape(v.shape)

    if v.size:
        out["zeros and -0"] = planted(0.0, -0.0)
        out["infinities"] = planted(np.inf, -np.inf)
        out["nan"] = planted(v.reshape(-1)[0], np.nan)
        out["exact 0 and 1"] = planted(0.0, 1.0)
    out["negative values"] = -v
    if v.ndim >= 2:
        masked = v.copy()
        masked[0] = -np.inf        # the first row all -inf, the rows after it finite (a fully masked attention row)
        out["a row all -inf"] = masked
    out["equal values"] = np.full_like(v, 0.5)
    out["halves"] = np.resize(np.array([-2.5, -1.5, -0.5, 0.5, 1.5, 2.5], v.dtype), v.shape)
    out["large magnitudes"] = v * np.float32(1e30)
    out["small magnitudes"] = v * np.float32(1e-30)   # normal numbers: MindSpore's products of subnormals are 0 (torch's are not)
    return out


def _as_dtype(v: np.ndarray, dtype: str) -> np.ndarray:
    """A floating input in another dtype, as the table's probes convert it (compat.table._as_dtype), int32 too."""
    if dtype == "int32":
        return table_dtype(v, "int64").astype(np.int32)
    return table_dtype(v, dtype)


def _literal(value) -> str:
    if isinstance(value, float) and not math.isfinite(value):
        return f"float({str(value)!r})"
    return repr(value)


@dataclass
class _Call:
    """One call's arguments: each item (name, text, keyword?) in the order they are written."""
    api: str
    method: bool
    args: list[tuple[str, str, bool]]

    def text(self) -> str:
        written = [f"{name}={text}" if keyword else text for name, text, keyword in self.args]
        if self.method:
            return f"t0.{self.api.rsplit('.', 1)[1]}({', '.join(written[1:])})"
        return f"{self.api}({', '.join(written)})"

    def with_(self, name: str, text: str, keyword: bool) -> "_Call":
        """The call with `name` given `text`, by keyword or at the end by place; given by keyword, what followed
        it by place goes by keyword too."""
        place = next((i for i, a in enumerate(self.args) if a[0] == name), len(self.args))
        args = [(n, t, k or (keyword and i > place and n != "self" and not n.startswith("*")))
                for i, (n, t, k) in enumerate(self.args) if n != name]
        return _Call(self.api, self.method, args + [(name, text, keyword)])


def cases(entry, specs: dict) -> list[Case]:
    """The parts of an entry's domain, one case each (the first is the plain float32 call). NotProbed where a
    required parameter has no spec."""
    api, method, layer = entry.torch["api"], entry.rule == "tensor_method", entry.rule == "api_class"
    a = signature_arguments(entry.torch.get("signature", ""))
    if a is None:
        raise NotProbed(f"its torch signature cannot be read ({entry.torch.get('signature')!r})")
    positional = [*a.posonlyargs, *a.args]
    defaults = dict(zip([p.arg for p in positional[len(positional) - len(a.defaults):]],
                        (ast.unparse(d) for d in a.defaults)))
    defaults.update({p.arg: ast.unparse(d) for p, d in zip(a.kwonlyargs, a.kw_defaults) if d is not None})
    never = set(specs.get("never", ()))
    api_spec = specs.get("apis", {}).get(api, {})
    if "skip" in api_spec:
        raise NotProbed(api_spec["skip"])
    if api_spec.get("draws"):
        raise NotProbed("it draws random values: it is proven by the distribution it draws, or the masks replayed")
    named = {**specs["params"], **{k: s for k, s in api_spec.items() if isinstance(s, dict)}}
    base, rng = specs.get("tensor", {}), np.random.default_rng(SEED)

    arrays: list[np.ndarray] = []
    tensor_params: dict[str, int] = {}     # parameter -> its tensor's index
    call = _Call(api, method, [])
    order = ([("self", False)] if method else []) + [(p.arg, False) for p in positional] + \
        ([("*" + a.vararg.arg, False)] if a.vararg else []) + [(p.arg, True) for p in a.kwonlyargs]
    tries: list[tuple[str, object, bool]] = []
    for name, keyword_only in order:
        if name.startswith("*"):        # `*size`: its value's items, by place
            value = named.get(name[1:], {}).get("value")
            if value is not None:
                call.args.append((name, ", ".join(map(_literal, value if isinstance(value, list) else [value])),
                                  False))
                tries.append((name, tuple(value) if isinstance(value, list) else value, True))
            continue
        spec = named.get(name, {})
        if name in never:
            continue
        if name in defaults and not ({"tensor", "value"} & set(api_spec.get(name, {}))):
            other = spec.get("try", _other_value(defaults[name]))
            if other is not None:
                tries.append((name, other, keyword_only or name in {p.arg for p in a.posonlyargs}))
            continue
        if "tensor" in spec:
            tensor_params[name] = len(arrays)
            arrays.append(_array(spec["tensor"] or {}, base, rng))
            call.args.append((name, f"t{tensor_params[name]}", keyword_only))
        elif "tensors" in spec:        # a list of tensors (torch.cat's): t1, t2 written as [t1, t2]
            n = spec["tensors"]
            first = len(arrays)
            arrays += [_array(t, base, rng) for t in (n if isinstance(n, list) else [{}] * int(n))]
            tensor_params[name] = first
            call.args.append((name, "[" + ", ".join(f"t{k}" for k in range(first, len(arrays))) + "]",
                              keyword_only))
        elif "value" in spec:
            value = tuple(spec["value"]) if isinstance(spec["value"], list) else spec["value"]
            call.args.append((name, _literal(value), keyword_only))
        else:
            raise NotProbed(f"no input for its parameter {name!r}: give one in mappings/table/probes.yaml")
    if layer:   # its constructor takes no tensor: what it is called on is probes.yaml's `forward`
        if arrays:
            raise NotProbed("its constructor takes a tensor: give its inputs in mappings/table/probes.yaml")
        arrays = [_array(spec or {}, base, rng) for spec in api_spec.get("forward", [{}])]
        tensor_params = {"the input" if len(arrays) == 1 else f"input {k}": k for k in range(len(arrays))}
    plain = call.text()
    floating = [i for i, x in enumerate(arrays) if np.issubdtype(x.dtype, np.floating)]
    out = [Case("float32", plain, tuple(arrays), layer)]

    def variant(part: str, changes: dict[int, np.ndarray], text: str = plain) -> None:
        out.append(Case(part, text, tuple(changes.get(i, x) for i, x in enumerate(arrays)), layer))

    for dtype in DTYPES if floating else ():
        variant(dtype, {i: _as_dtype(arrays[i], dtype) for i in floating})
    if len(floating) > 1:
        variant("float32 with int64", {i: _as_dtype(arrays[i], "int64") for i in floating[1:]})
        variant("float16 with float32", {floating[0]: arrays[floating[0]].astype(np.float16)})
    for i in floating:
        owner = max((k, n) for n, k in tensor_params.items() if k <= i)[1]
        where = f" in {'the receiver' if method and i == 0 else owner}"
        where = where if len(arrays) > 1 else ""
        for edge, value in _edges(arrays[i]).items():
            variant(edge + where, {i: value})
        variant("negative integers" + where, {i: np.rint((arrays[i] - 0.5) * 20).astype(np.int64)})
    shaped = [i for i, x in enumerate(arrays) if x.ndim >= 1 and x.shape == arrays[0].shape]
    if arrays and arrays[0].ndim >= 1:
        for part, size in ((EMPTY, 0), ("a size-1 dim", 1)):
            variant(part, {i: arrays[i][:size] for i in shaped})
    for name, text, keyword in list(call.args):   # a required value given by keyword
        if not (text.startswith("t") or text.startswith("[t") or keyword or name.startswith("*")):
            variant(f"{name}= by keyword", {}, call.with_(name, text, True).text())
    for name, value, keyword_only in tries:
        if name.startswith("*"):      # the items as one tuple instead: torch.zeros((2, 3))
            variant(f"{name[1:]} as one tuple", {}, call.with_(name, _literal(value), False).text())
            continue
        value_text = _literal(tuple(value) if isinstance(value, list) else value)
        variant(f"{name}={value_text}", {}, call.with_(name, value_text, True).text())
        if not keyword_only and _positional_after(call, name, order):
            variant(f"{name} by place", {}, call.with_(name, value_text, False).text())
        if isinstance(value, int) and not isinstance(value, bool) and "dim" in name:
            variant(f"{name}={-1 - value}", {}, call.with_(name, repr(-1 - value), True).text())
            if name in ("dim", "dims"):
                variant(f"{name}=(0, 1)", {}, call.with_(name, "(0, 1)", True).text())
    return out


def _positional_after(call: _Call, name: str, order: list[tuple[str, bool]]) -> bool:
    """Whether `name` can be given by place after what the call gives: every parameter before it is given by
    place."""
    given = [n for n, _, keyword in call.args if not keyword]
    before = [n for n, _ in order[:[n for n, _ in order].index(name)]]
    return before == given


def module_text(found: list[Case]) -> str:
    """The torch file of an entry's cases: one function per case, each on lines of its own; a layer's case has
    its layer built above it, at module level (``layer_3 = torch.nn.Softmax(dim=0)``), as a model's __init__
    would."""
    lines = ["import torch", ""]
    for i, case in enumerate(found):
        names = ", ".join(f"t{k}" for k in range(len(case.tensors)))
        if case.layer:
            lines += [f"layer_{i} = {case.call}", f"def case_{i}({names}):", f"    return layer_{i}({names})", ""]
        else:
            lines += [f"def case_{i}({names}):", f"    return {case.call}", ""]
    return "\n".join(lines)


def case_of_line(found: list[Case], line: int) -> int:
    """The case whose lines in module_text hold `line` (1-based): two lines of imports, then three lines a case,
    four for a layer's."""
    start = 3
    for i, case in enumerate(found):
        start += 4 if case.layer else 3
        if line < start:
            return i
    return len(found) - 1


# -- running and judging -------------------------------------------------------------------------------------------

class _Refused(Exception):
    pass


class _Differs(Exception):
    pass


class _LessPrecise(Exception):
    pass


def _first_place(mask: np.ndarray) -> tuple:
    return tuple(int(i) for i in np.argwhere(mask)[0]) if mask.ndim else ()


def _judge(name: str, t: np.ndarray, m: np.ndarray, ref: np.ndarray) -> None:
    """One tensor: raises _Differs saying how it differs (shape, dtype, a non-finite place, a value)."""
    from recompat.compat.compare import CompareRow, judge_by_reference

    if t.shape != m.shape:
        raise _Differs(f"{name}: shape {t.shape} on torch, {m.shape} on MindSpore")
    if t.dtype != m.dtype:
        raise _Differs(f"{name}: dtype {t.dtype} on torch, {m.dtype} on MindSpore")
    if t.size == 0:
        return
    if t.dtype == bool or np.issubdtype(t.dtype, np.integer):
        bad = t != m
        if bad.any():
            at = _first_place(bad)
            raise _Differs(f"{name}: at {list(at)} torch gives {t[at]}, MindSpore {m[at]}")
        return
    t64, m64, r = t.astype(np.float64), m.astype(np.float64), ref.astype(np.float64)
    # torch's float32 non-finite where its float64 run is finite: torch overflowed there, its own error is
    # unbounded, and by the round-off rule whatever MindSpore gives is within it (LayerNorm of values near 1e30)
    overflow = ~np.isfinite(t64) & np.isfinite(r)
    odd = ~(np.isfinite(t64) & np.isfinite(m64)) & ~overflow
    unequal = odd & ~((t64 == m64) | (np.isnan(t64) & np.isnan(m64)))
    if unequal.any():
        at = _first_place(unequal)
        later = int(unequal.sum()) - 1
        raise _Differs(f"{name}: at {list(at)} torch gives {t[at]}, MindSpore {m[at]}"
                       + (f" ({later} more place(s) like it)" if later else ""))
    keep = ~odd & ~overflow
    if not keep.any():
        return
    row = CompareRow(name=name, kind="output", expected_shape=t.shape, actual_shape=m.shape,
                     expected_dtype=str(t.dtype), actual_dtype=str(m.dtype), max_abs_err=None, max_rel_err=None,
                     cosine=None, within=None, rtol=0.0, atol=0.0, passed=False)
    r = np.where(np.isfinite(r), r, t64)
    judge_by_reference(row, t64[keep], m64[keep], r[keep], "torch", "MindSpore")
    if not row.passed:
        with np.errstate(invalid="ignore"):    # inf - inf at the non-finite places, which `keep` leaves out
            worst = np.where(keep, np.abs(m64 - r), 0.0)
        at = _first_place(worst == worst.max())
        if worst.max() <= LESS_PRECISE * np.abs(r[keep]).max():
            raise _LessPrecise(f"{name}: at {list(at)} torch gives {t[at]}, MindSpore {m[at]} (float64: "
                               f"{r[at]:.17g}): beyond round-off, within {LESS_PRECISE:g} of the largest value")
        raise _Differs(f"{name}: at {list(at)} torch gives {t[at]}, MindSpore {m[at]} (float64: {r[at]:.17g}), "
                       f"beyond round-off")


class Runner:
    """torch and MindSpore imported once; the specs read once."""

    def __init__(self, specs: dict | None = None, maps=None):
        """`maps`: the mappings the entries come from (default: the shipped ones)."""
        self.specs = specs if specs is not None else read_probes()
        self._base = maps

    @functools.cached_property
    def maps(self):
        """What the cases are translated with: every core entry taken for proven, no domain record (what is probed
        is the entry's translation, not what an earlier record made of it)."""
        from recompat import mappings
        from recompat.compat.prove import every_entry_proven

        proven = every_entry_proven(self._base or mappings.default())
        return dataclasses.replace(proven, entries=tuple(dataclasses.replace(e, domain=()) for e in proven.entries),
                                   table=tuple(dataclasses.replace(e, domain=()) for e in proven.table))

    def probe_entry(self, entry, known: dict[str, str] | None = None, trying=lambda part: None) -> Domain:
        """The entry's outcomes. `known`: parts whose outcome is given, not run (one that killed an earlier
        process); `trying(part)` is called before MindSpore runs a part."""
        import torch

        import mindspore as ms

        ms.set_context(mode=ms.PYNATIVE_MODE)
        domain = _domain_of(entry)
        try:
            if entry.rule == "api_class":
                _a_layer(entry.torch["api"], torch)
            found = cases(entry, self.specs)
        except NotProbed as exc:
            domain.reason = str(exc)
            return domain
        torch.manual_seed(SEED)
        runs = {}
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            # a layer torch refuses to build from a part's arguments: that part is outside the domain
            torch_ns, unbuilt = _exec_each(module_text(found), f"<domain of {entry.id} (torch)>")
            for i, case in enumerate(found):
                try:
                    if i in unbuilt:
                        raise _Refused(unbuilt[i])
                    runs[i] = self._torch(torch_ns[f"case_{i}"], case, entry, torch,
                                          torch_ns.get(f"layer_{i}") if case.layer else None)
                except _Refused as exc:
                    if i == 0:
                        domain.reason = (f"torch refuses its plain call {case.call} ({exc}): give its inputs in "
                                         "mappings/table/probes.yaml")
                        return domain
        if runs and not runs[0][0]:
            domain.reason = f"its call {found[0].call} returns no tensor"
            return domain
        if _draws(torch_ns["case_0"], found[0], torch):
            domain.reason = (f"its call {found[0].call} draws random values (another seed, other values): it is "
                             "proven by the distribution it draws, or the masks replayed")
            return domain
        ms_ns, left, unbuilt = self._translated(found, entry)
        # an empty dim last, then the plain call once more, its outcome dropped: MindSpore 2.10 fails the next
        # backward of the same op after one over an empty dim ("For Unstack, memcpy error"), or gives it the empty
        # shape, which would be charged to another part (docs/behaviours.md)
        for i, case in sorted(enumerate(found), key=lambda ic: ic[1].part == EMPTY):
            if i not in runs:
                continue
            if i in left:
                domain.parts[case.part] = f"left by hand: {left[i]}"
            elif i in unbuilt:
                domain.parts[case.part] = f"raises: {unbuilt[i]}"
            elif case.part in (known or {}):
                domain.parts[case.part] = known[case.part]
            else:
                trying(case.part)
                fn = ms_ns[f"case_{i}"]
                domain.parts[case.part] = self._judge_case(fn, case, runs[i], ms, torch_ns.get(f"layer_{i}"))
                if case.part == EMPTY and 0 not in left:
                    self._judge_once(ms_ns["case_0"], found[0], runs[0], ms, torch_ns.get("layer_0"))
        return domain

    def _torch(self, fn, case: Case, entry, torch, layer=None):
        """torch's outputs, its float64 reference's, and each side's gradients (None where none is asked): with
        respect to the floating inputs and, for a layer, its parameters (the reference: a float64 copy of it)."""
        grad = not entry.torch["api"].endswith("_")   # torch refuses an in-place op on a leaf that needs a gradient

        def run(arrays, fn=fn):
            ts = [torch.tensor(x) for x in arrays]
            for t in ts:
                if grad and t.is_floating_point():
                    t.requires_grad_()
            torch.manual_seed(0)
            try:
                out = _outputs(fn(*ts))
            except Exception as exc:   # noqa: BLE001 -- outside torch's domain
                raise _Refused(str(exc)) from None
            return ts, out

        ref_layer = copy.deepcopy(layer).double() if layer is not None else None
        ref_fn = fn if layer is None else types.FunctionType(
            fn.__code__, {**fn.__globals__, fn.__code__.co_names[0]: ref_layer})   # `layer_3` its one global
        try:
            ts, out = run(case.tensors)
        except _Refused:
            if not grad:
                raise
            grad = False            # one that refuses a tensor that needs a gradient (Tensor.numpy)
            ts, out = run(case.tensors)
        try:
            ref_ts, ref_out = run([x.astype(np.float64) if np.issubdtype(x.dtype, np.floating) else x
                                   for x in case.tensors], ref_fn)
        except _Refused:
            ref_ts, ref_out, ref_layer = ts, out, layer
        if not all(isinstance(o, (torch.Tensor, np.ndarray, bool, int, float)) for o in out):
            return [], [], None, None      # not a tensor: nothing to compare value by value
        outputs = [_numpy(o) for o in out]
        refs = [_numpy(o) for o in ref_out] if len(ref_out) == len(out) else outputs
        graded = _graded(out)
        inputs = [k for k, t in enumerate(ts) if t.requires_grad]
        params = [n for n, p in layer.named_parameters() if p.requires_grad] if layer is not None and grad else []
        if not (graded and (inputs or params)):
            return outputs, refs, None, None
        weights = _weights(outputs, graded)

        def leaves(ts, layer):
            own = dict(layer.named_parameters()) if params else {}
            return [ts[k] for k in inputs] + [own[n] for n in params]

        grads = _gradients(torch, out, leaves(ts, layer), weights)
        ref_grads = _gradients(torch, ref_out, leaves(ref_ts, ref_layer), weights) if ref_ts is not ts else grads
        return outputs, refs, (inputs, weights, grads, params), ref_grads

    def _translated(self, found: list[Case], entry) -> tuple[dict, dict[int, str], dict[int, str]]:
        """The translated file's namespace, the cases whose call the translator left (index -> why), and those
        whose layer MindSpore refuses to build (index -> its error)."""
        from recompat.translator.translate import translate_bytes

        text = module_text(found)
        if isinstance(entry, RowPair):   # the row's own call, not a translation
            ns, unbuilt = _exec_each(_row_call_text(text, entry), f"<domain of {entry.id} (MindSpore)>")
            return ns, {}, unbuilt
        result = translate_bytes(text.encode(), f"<domain of {entry.id}>", to="mindspore", scope="model",
                                 mappings=self.maps)
        left = {}
        for site in result.sites:
            if site.status == "manual":
                left.setdefault(case_of_line(found, site.line), next((f"{d.code} {d.message}" for d in site.diagnostics
                                         if d.status == "manual"), "manual"))
        code = (result.new_data or text.encode()).decode()
        ns, unbuilt = _exec_each(code, f"<domain of {entry.id} (MindSpore)>")
        return ns, left, unbuilt

    def _judge_case(self, fn, case: Case, torch_run, ms, torch_layer=None) -> str:
        """The case's outcome: the worse of two runs on MindSpore (a kernel that reads memory it never wrote, as
        some do on an empty dim, or leaves an earlier op's error behind, is caught in one of them)."""
        return max((self._judge_once(fn, case, torch_run, ms, torch_layer) for _ in range(2)), key=_severity)

    def _judge_once(self, fn, case: Case, torch_run, ms, torch_layer=None) -> str:
        """One run of a case on MindSpore, judged; a layer's case first gets torch's layer's weights."""
        outputs, refs, grad_run, ref_grads = torch_run
        _flush(ms)   # an earlier case's error left behind is not this case's
        xs = [ms.Tensor(x) for x in case.tensors]
        part = ""
        try:
            params = self._given_weights(fn, torch_layer, ms) if case.layer else {}
            m_out = retry_on_mindspore(lambda: [_numpy(o) for o in _outputs(fn(*xs))], ms)
            if len(m_out) != len(outputs):
                raise _Differs(f"torch gives {len(outputs)} output(s), MindSpore {len(m_out)}")
            for k, (t, m, r) in enumerate(zip(outputs, m_out, refs)):
                _judge(f"output {k}" if len(outputs) > 1 else "the output", t, m, r)
            if grad_run is not None:
                inputs, weights, grads, names = grad_run
                part = "backward: "
                m_grads = self._mindspore_gradients(fn, xs, inputs, weights, ms, [params[n] for n in names])
                for what, t, m, r in zip([f"t{k}" for k in inputs] + names, grads, m_grads, ref_grads):
                    _judge(f"the gradient of {what}", t, m, r)
        except _Differs as d:
            return f"differs: {d}"
        except _LessPrecise as d:
            return f"less precise: {d}"
        except Exception as exc:   # noqa: BLE001 -- MindSpore refuses the call (or its backward)
            return (f"no kernel: {part}{_first_line(exc)}" if _no_kernel(exc)
                    else f"raises: {part}{type(exc).__name__}: {_first_line(exc)}")
        return "agrees"

    def _given_weights(self, fn, torch_layer, ms) -> dict:
        """The case's MindSpore layer (the one global its function calls), given torch's layer's parameters and
        buffers as a user's model is (compat.weights), in training mode as torch's: its Parameters by torch's
        names. A layer whose weights cannot be paired raises, naming them."""
        from recompat.compat.weights import transfer_weights

        layer = fn.__globals__[fn.__code__.co_names[0]]
        moved = transfer_weights(torch_layer, layer, mappings=self.maps)
        layer.set_train(True)
        return {pair.torch_name: m for pair, (_, m) in zip(moved.pairs, moved.tensors)}

    @staticmethod
    def _mindspore_gradients(fn, xs, inputs, weights, ms, params=()) -> list[np.ndarray]:
        """The gradients of the weighted sum with respect to the inputs `inputs`, then the Parameters `params`."""
        def loss(*given):
            args = list(xs)
            for k, x in zip(inputs, given):
                args[k] = x
            outs = _outputs(fn(*args))
            return sum((outs[k] * ms.Tensor(w).astype(outs[k].dtype)).sum() for k, w in weights.items())

        def grads():
            g = ms.grad(loss, grad_position=tuple(range(len(inputs))) if inputs else None,
                        weights=list(params) or None)(*[xs[k] for k in inputs])
            if inputs and params:      # (the inputs' gradients, the weights')
                return [_numpy(x) for part in g for x in _outputs(part)]
            return [_numpy(x) for x in _outputs(g)]

        return retry_on_mindspore(grads, ms)


def _graded(out: list) -> list[int]:
    """The outputs a gradient is asked of: torch's real floating outputs that need one."""
    return [k for k, t in enumerate(out) if getattr(t, "requires_grad", False) and not t.is_complex()]


def _gradients(torch, out: list, leaves: list, weights: dict) -> list[np.ndarray]:
    loss = sum((out[k] * torch.tensor(w, dtype=out[k].dtype)).sum() for k, w in weights.items())
    found = torch.autograd.grad(loss, leaves, allow_unused=True)
    return [_numpy(g.to_dense() if g.is_sparse else g) if g is not None   # sparse: gather(sparse_grad=True)
            else np.zeros(x.shape, _numpy(x).dtype) for g, x in zip(found, leaves)]


def _domain_of(entry) -> Domain:
    """An entry's outcomes, none yet (a table row's own pair names its MindSpore API)."""
    return Domain(entry.id, entry.torch["api"], mindspore=entry.mindspore["api"] if isinstance(entry, RowPair) else "")


def _draws(fn, case: Case, torch) -> bool:
    """Whether torch's call gives other values under another seed (a dropout layer no spec marks)."""
    outs = []
    for seed in (0, 1):
        torch.manual_seed(seed)
        with torch.no_grad():
            outs.append([_numpy(o) for o in _outputs(fn(*[torch.tensor(x) for x in case.tensors]))])
    return any(a.shape != b.shape or not np.array_equal(a, b, equal_nan=True) for a, b in zip(*outs))


def _exec_each(code: str, filename: str) -> tuple[dict, dict[int, str]]:
    """module_text's file (or its translation) run statement by statement: its namespace, and the cases whose
    layer could not be built (index -> the error), so that one part's constructor error is that part's outcome."""
    ns: dict = {}
    failed = {}
    for stmt in ast.parse(code).body:
        try:
            exec(compile(ast.Module([stmt], []), filename, "exec"), ns)   # noqa: S102
        except Exception as exc:   # noqa: BLE001
            target = stmt.targets[0].id if isinstance(stmt, ast.Assign) and isinstance(stmt.targets[0], ast.Name) else ""
            if not target.startswith("layer_"):
                raise
            failed[int(target.removeprefix("layer_"))] = f"constructor: {type(exc).__name__}: {_first_line(exc)}"
    return ns, failed


def _a_layer(api: str, torch) -> None:
    """NotProbed unless `api` is a torch layer that computes something of its own."""
    cls = resolve(api)
    if not (isinstance(cls, type) and issubclass(cls, torch.nn.Module)):
        raise NotProbed(f"{api} is no layer (torch.nn.Module): the translator's own cases cover it")
    if cls.forward is torch.nn.Module.forward:
        raise NotProbed(f"{api} has no forward of its own: a container, proven by the models that hold layers")


# -- the record ----------------------------------------------------------------------------------------------------

def probed_entries(maps) -> list:
    """The entries probed over a domain: the proven function and Tensor-method entries translated from torch, and
    those the translator makes from the mapping table's agreeing rows (RC323), that draw nothing (a random
    function, an initializer and dropout are proven by the distribution they draw, or the masks replayed)."""
    return [e for e in (*maps.entries, *maps.table) if e.rule in RULES and e.source in ("torch", "both")
            and not e.draws and e.form != "initializer" and e.proven
            and not {n.rsplit(".", 1)[-1] for n in e.names("torch")} & maps.functional_dropout]


def recorded(path: Path = DOMAIN_RECORD) -> dict[str, dict]:
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except FileNotFoundError:
        return {}
    return data.get("entries", {})


def record_text(domains: dict[str, Domain]) -> bytes:
    entries = {k: domains[k].as_dict() for k in sorted(domains)}
    return (json.dumps({"kind": KIND, "entries": entries}, indent=1, ensure_ascii=False) + "\n").encode()


def _kind(outcome: str) -> str:
    return next(k for k in OUTCOMES if outcome.startswith(k))


def _severity(outcome: str) -> int:
    return OUTCOMES.index(_kind(outcome))


def kinds(parts: dict[str, str]) -> dict[str, str]:
    """What --check holds an entry to: each part's outcome group (KIND_OF), not its wording."""
    return {p: KIND_OF[_kind(o)] for p, o in parts.items()}


def probe_all(entries: list, maps=None, say=print) -> dict[str, Domain]:
    """Each entry (of `maps`, default: the shipped mappings) probed in a process of its own: one for the whole run,
    started again where MindSpore kills it (a kernel that segfaults on one input), the part it was running then
    recorded as "crashes". An entry the probe cannot handle gets a reason; nothing crashes the run."""
    from recompat import mappings

    maps = maps or mappings.default()
    pending, found, known = list(entries), {}, {}
    with tempfile.TemporaryDirectory(prefix="recompat-domain-") as tmp:
        job = Path(tmp) / "job.pickle"
        while pending:
            job.write_bytes(pickle.dumps((maps, pending, known)))
            trying, rc, started, log = None, None, False, job.with_suffix(".log")
            with open(log, "wb") as err, subprocess.Popen(   # MindSpore's logging: not shown, unless it cannot start
                    [sys.executable, "-c", f"from {__name__} import _worker; _worker({str(job)!r})"],
                    stdout=subprocess.PIPE, stderr=err, text=True, encoding="utf-8") as proc:
                for line in proc.stdout:
                    if not line.startswith(WORKER_TAG):
                        continue                      # MindSpore's own printing
                    message = json.loads(line[len(WORKER_TAG):])
                    started, trying = True, message.get("trying")
                    if "domain" in message:
                        found[message["domain"]["entry"]] = Domain(**message["domain"])
                        if len(found) % 25 == 0 or len(found) == len(entries):
                            say(f"domain: {len(found)}/{len(entries)} entries probed")
                rc = proc.wait()
            pending = [e for e in pending if e.id not in found]
            if not pending:
                break
            why = f"the process died ({_exit_name(rc)})"
            if not started:        # nothing probed: the same would happen to every entry
                last = log.read_text(encoding="utf-8", errors="replace").strip().splitlines()[-3:]
                raise RuntimeError(f"the domain probes' process ({sys.executable}) {why.removeprefix('the process ')}"
                                   f" before it began: {' / '.join(last) or 'it printed nothing'}")
            if trying is None:     # before MindSpore ran a part: in torch, or the translation
                e = pending.pop(0)
                found[e.id] = dataclasses.replace(_domain_of(e), reason=f"the probe's {why}")
                where = e.id
            else:
                known.setdefault(trying[0], {})[trying[1]] = f"crashes: {why} running it"
                where = ": ".join(trying)
            say(f"domain: {where}: {why}; going on in a new process")
    return found


def _exit_name(rc: int) -> str:
    if rc < 0:
        try:
            return signal.Signals(-rc).name
        except ValueError:
            return f"signal {-rc}"
    return f"exit status {rc}"



def _worker(job: str) -> None:
    """probe_all's process: probe the job's entries, one line for each part it starts on MindSpore and each entry
    done, flushed, so that the parent knows where it died."""
    maps, entries, known = pickle.loads(Path(job).read_bytes())   # noqa: S301 -- written by probe_all just now
    runner = Runner(maps=maps)

    def tell(message: dict) -> None:
        print(WORKER_TAG + json.dumps(message), flush=True)

    tell({"started": len(entries)})
    for entry in entries:
        try:
            d = runner.probe_entry(entry, known.get(entry.id), lambda part: tell({"trying": [entry.id, part]}))
        except Exception as exc:   # noqa: BLE001
            d = dataclasses.replace(_domain_of(entry), reason=f"the probe failed: {type(exc).__name__}: "
                                                              f"{str(exc)[:200]}")
        tell({"domain": dataclasses.asdict(d)})


def prove(entries: list, maps, folder: Path | None = None, *, check: bool = False, say=print) -> int:
    """`recompat prove`'s domain step: probe `entries` (those of them :func:`probed_entries` takes) and record
    their outcomes in the folder's domain.json, the other entries' records kept; with ``check``, write nothing
    and return 1 where an outcome's kind changed (or an entry has no record). 0 otherwise."""
    from recompat._files import write_atomic

    path = (folder or MAPPINGS) / DOMAIN_FILE
    before = recorded(path)
    rows = [e for e in entries if isinstance(e, RowPair)]   # given: all of them (the others' records go)
    given = {e.id: e for e in entries}     # an entry proven just now is probed, and its record kept, as the others
    now = dataclasses.replace(maps, entries=tuple(given.get(e.id, e) for e in maps.entries))
    taken = {e.id for e in probed_entries(now)} | ({e.id for e in rows} if rows else
                                                   {k for k in before if k.startswith(ROW)})
    todo = [e for e in entries if e.id in taken]
    if not todo:
        return 0
    found = probe_all(todo, maps, say=say)
    differing = {k: d for k, d in found.items() if d.differing()}
    say(f"domain: {len(found)} entries probed over {sum(len(d.parts) for d in found.values())} parts: "
        f"{len(found) - len(differing) - sum(1 for d in found.values() if d.reason)} agree over every part tried, "
        f"{len(differing)} differ on part of it, {sum(1 for d in found.values() if d.reason)} not probed")
    if check:
        changed = [k for k, d in found.items() if kinds((before.get(k) or {}).get("parts", {})) != kinds(d.parts)
                   or k not in before]
        for k in changed:
            old, new = kinds((before.get(k) or {}).get("parts", {})), kinds(found[k].parts)
            moved = sorted(p for p in {*old, *new} if old.get(p) != new.get(p))
            say(f"domain: {k}: " + ("no record" if k not in before else
                                    "; ".join(f"{p}: {old.get(p, 'not tried')} -> {new.get(p, 'not tried')}"
                                              for p in moved)))
        if changed:
            say(f"domain: {len(changed)} entr{'y' if len(changed) == 1 else 'ies'} changed: run `recompat prove` "
                f"and commit {path.name}")
            return 1
        return 0
    merged = {k: Domain(k, v.get("api", ""), dict(v.get("parts", {})), v.get("reason", ""), v.get("mindspore", ""))
              for k, v in before.items() if k in taken}
    merged.update(found)
    text = record_text(merged)
    if not (path.is_file() and path.read_bytes() == text):
        write_atomic(path, text)
        say(f"domain: recorded {path}")
    return 0
