"""Domain probes: each function and Tensor-method entry tried over the inputs real code passes, through the
translator, on both frameworks.

An entry's paired example proves it on one call. A domain probe tries the entry's torch API over its domain, the
parts of which are generated from the recorded torch signature and mappings/table/probes.yaml (the specs the
table's probes use): each dtype torch takes (float16/32/64, int32/64, bool, mixed where torch promotes), each
keyword form (a required value by keyword, each default's other value by keyword and by place, negative and tuple
dims), edge values (zeros and -0, negatives, infinities, NaN, a row all -inf, equal values, halves, exact 0 and 1,
very large and very small magnitudes, negative integers) and edge shapes (an empty and a size-1 dim). A part torch
refuses is outside the domain and is not recorded.

Each part is one case: a torch function of one call (``def case_3(t0): return t0.any(dim=-1)``). The cases of an
entry are one file, translated as a user's file is (``--scope model``, every core entry taken for proven, so that
what is probed is the entry's own translation), and run on the same inputs on both sides. A case is judged as
``compare()`` judges a tensor: outputs of the same number, shape and dtype; the same NaN and infinities at the
same places; integers and bools exactly; floating values by the round-off rule against torch's float64 run of the
same inputs (``compare.judge_by_reference``); then, where torch's output is floating, the gradients of a fixed
weighted sum of it with respect to the floating inputs, the same way. No tolerance is set per entry.

The outcome of a part: ``agrees``, ``differs: what`` (the first place and both values), ``no kernel: ...`` (MindSpore
has the call but not on this device) or ``left by hand: ...`` (the translator does not convert that form: no
evidence either way). :func:`probe_entry` gives an entry's outcomes; ``recompat prove`` records them in
mappings/domain.json (:func:`record`), which the loader reads into ``Entry.domain``.
"""
from __future__ import annotations

import ast
import json
import math
import warnings
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np

from recompat.mappings import DOMAIN_FILE, HERE as MAPPINGS

DOMAIN_RECORD = MAPPINGS / DOMAIN_FILE
KIND = "recompat-domain"
RULES = ("api_function", "tensor_method")   # the entries probed over a domain
DTYPES = ("float16", "float64", "int32", "int64", "bool")
OUTCOMES = ("agrees", "less precise", "differs", "no kernel", "left by hand")
# beyond round-off, but within this much of the tensor's largest value (float16's precision): "less precise", not
# "differs" (MindSpore's float32 exp is up to about 20 ulps from float64 where torch's is within one)
LESS_PRECISE = 2.0 ** -11


@dataclass(frozen=True)
class Case:
    part: str                                   # the part of the domain it stands for: "int64", "nan in input"
    call: str                                   # the torch call, over the tensor inputs t0, t1, ...
    tensors: tuple[np.ndarray, ...]             # what t0, t1, ... are given


@dataclass
class Domain:
    """An entry's outcomes over its domain."""
    entry: str
    api: str
    parts: dict[str, str] = field(default_factory=dict)   # part -> outcome
    reason: str = ""                                       # why it is not probed, where it is not

    def differing(self) -> dict[str, str]:
        return {p: o for p, o in self.parts.items() if o.startswith("differs")}

    def as_dict(self) -> dict:
        return {"api": self.api, **({"reason": self.reason} if self.reason else {}), "parts": self.parts}


class NotProbed(Exception):
    """An entry whose domain cannot be generated (a required parameter no spec gives a value): the message says why."""


# -- the parts of a domain ---------------------------------------------------------------------------------------

def _edges(v: np.ndarray) -> dict[str, np.ndarray]:
    """Edge values in a floating input (float32), each class one array of the input's shape."""
    out = {}

    def planted(**at) -> np.ndarray:
        w = v.copy().reshape(-1)
        for index, value in at.items():
            w[int(index[1:]) % w.size] = value
        return w.reshape(v.shape)

    if v.size:
        out["zeros and -0"] = planted(i0=0.0, i1=-0.0)
        out["infinities"] = planted(i0=np.inf, i1=-np.inf)
        out["nan"] = planted(i1=np.nan)
        out["exact 0 and 1"] = planted(i0=0.0, i1=1.0)
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
    """A floating input (values in the specs' ranges) in another dtype: integers as small whole numbers, bools
    true above the median."""
    from recompat.compat.table import _as_dtype as convert

    if dtype == "int32":
        return convert(v, "int64").astype(np.int32)
    return convert(v, dtype)


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
    from recompat.compat.table import SEED, _array, _other_value
    from recompat.mappings import signature_arguments

    api, method = entry.torch["api"], entry.rule == "tensor_method"
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
    plain = call.text()
    floating = [i for i, x in enumerate(arrays) if np.issubdtype(x.dtype, np.floating)]
    out = [Case("float32", plain, tuple(arrays))]

    def variant(part: str, changes: dict[int, np.ndarray], text: str = plain) -> None:
        out.append(Case(part, text, tuple(changes.get(i, x) for i, x in enumerate(arrays))))

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
        for part, size in (("an empty dim", 0), ("a size-1 dim", 1)):
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
    """The torch file of an entry's cases: one function per case, each on lines of its own."""
    lines = ["import torch", ""]
    for i, case in enumerate(found):
        names = ", ".join(f"t{k}" for k in range(len(case.tensors)))
        lines += [f"def case_{i}({names}):", f"    return {case.call}", ""]
    return "\n".join(lines)


def _case_line(i: int) -> int:
    return 3 + 3 * i + 1     # the `return` line of case_i in module_text


# -- running and judging -------------------------------------------------------------------------------------------

class _Refused(Exception):
    pass


class _Differs(Exception):
    pass


class _LessPrecise(Exception):
    pass


def _numpy(x) -> np.ndarray:
    from recompat.compat.table import _numpy as as_numpy

    return as_numpy(x)


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
    t64, m64 = t.astype(np.float64), m.astype(np.float64)
    odd = ~(np.isfinite(t64) & np.isfinite(m64))
    unequal = odd & ~((t64 == m64) | (np.isnan(t64) & np.isnan(m64)))
    if unequal.any():
        at = _first_place(unequal)
        later = int(unequal.sum()) - 1
        raise _Differs(f"{name}: at {list(at)} torch gives {t[at]}, MindSpore {m[at]}"
                       + (f" ({later} more place(s) like it)" if later else ""))
    keep = ~odd
    if not keep.any():
        return
    row = CompareRow(name=name, kind="output", expected_shape=t.shape, actual_shape=m.shape,
                     expected_dtype=str(t.dtype), actual_dtype=str(m.dtype), max_abs_err=None, max_rel_err=None,
                     cosine=None, within=None, rtol=0.0, atol=0.0, passed=False)
    r = ref.astype(np.float64)
    r = np.where(np.isfinite(r), r, t64)
    judge_by_reference(row, t64[keep], m64[keep], r[keep], "torch", "MindSpore")
    if not row.passed:
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
        from recompat.compat.table import read_probes

        self.specs = specs if specs is not None else read_probes()
        self._maps = maps

    @property
    def maps(self):
        """What the cases are translated with: every core entry taken for proven, no domain record (what is probed
        is the entry's translation, not what an earlier record made of it)."""
        if self._maps is None:
            import dataclasses

            from recompat import mappings
            from recompat.compat.prove import every_entry_proven

            proven = every_entry_proven(mappings.default())
            self._maps = dataclasses.replace(
                proven, entries=tuple(dataclasses.replace(e, domain=()) for e in proven.entries),
                table=tuple(dataclasses.replace(e, domain=()) for e in proven.table))
        return self._maps

    def probe_entry(self, entry) -> Domain:
        import torch

        import mindspore as ms

        ms.set_context(mode=ms.PYNATIVE_MODE)
        domain = Domain(entry.id, entry.torch["api"])
        try:
            found = cases(entry, self.specs)
        except NotProbed as exc:
            domain.reason = str(exc)
            return domain
        torch_ns: dict = {}
        exec(compile(module_text(found), f"<domain of {entry.id} (torch)>", "exec"), torch_ns)   # noqa: S102
        runs = {}
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            for i, case in enumerate(found):
                try:
                    runs[i] = self._torch(torch_ns[f"case_{i}"], case, entry, torch)
                except _Refused as exc:
                    if i == 0:
                        domain.reason = (f"torch refuses its plain call {case.call} ({exc}): give its inputs in "
                                         "mappings/table/probes.yaml")
                        return domain
        if runs and not runs[0][0]:
            domain.reason = f"its call {found[0].call} returns no tensor"
            return domain
        ms_ns, left = self._translated(found, entry)
        for i, case in enumerate(found):
            if i not in runs:
                continue
            if i in left:
                domain.parts[case.part] = f"left by hand: {left[i]}"
                continue
            domain.parts[case.part] = self._judge_case(ms_ns[f"case_{i}"], case, runs[i], ms)
        return domain

    def _torch(self, fn, case: Case, entry, torch):
        """torch's outputs, its float64 reference's, and each side's gradients (None where none is asked)."""
        grad = not entry.torch["api"].endswith("_")   # torch refuses an in-place op on a leaf that needs a gradient

        def run(arrays):
            ts = [torch.tensor(x) for x in arrays]
            for t in ts:
                if grad and t.is_floating_point():
                    t.requires_grad_()
            torch.manual_seed(0)
            try:
                out = _flat(fn(*ts))
            except Exception as exc:   # noqa: BLE001 -- outside torch's domain
                raise _Refused(str(exc)) from None
            return ts, out

        try:
            ts, out = run(case.tensors)
        except _Refused:
            if not grad:
                raise
            grad = False            # one that refuses a tensor that needs a gradient (Tensor.numpy)
            ts, out = run(case.tensors)
        try:
            ref_ts, ref_out = run([x.astype(np.float64) if np.issubdtype(x.dtype, np.floating) else x
                                   for x in case.tensors])
        except _Refused:
            ref_ts, ref_out = ts, out
        if not all(isinstance(o, (torch.Tensor, np.ndarray, bool, int, float)) for o in out):
            return [], [], None, None      # not a tensor: nothing to compare value by value
        outputs = [_numpy(o) for o in out]
        refs = [_numpy(o) for o in ref_out] if len(ref_out) == len(out) else outputs
        graded = _graded(out)
        inputs = [k for k, t in enumerate(ts) if t.requires_grad]
        if not (graded and inputs):
            return outputs, refs, None, None
        weights = _weights(outputs, graded)
        grads = _gradients(torch, out, ts, inputs, weights)
        ref_grads = _gradients(torch, ref_out, ref_ts, inputs, weights) if ref_ts is not ts else grads
        return outputs, refs, (inputs, weights, grads), ref_grads

    def _translated(self, found: list[Case], entry) -> tuple[dict, dict[int, str]]:
        """The translated file's namespace, and the cases whose call the translator left (index -> why)."""
        from recompat.translator.translate import translate_bytes

        text = module_text(found)
        result = translate_bytes(text.encode(), f"<domain of {entry.id}>", to="mindspore", scope="model",
                                 mappings=self.maps)
        left = {}
        for site in result.sites:
            if site.status == "manual":
                i = (site.line - 4) // 3
                left.setdefault(i, next((f"{d.code} {d.message}" for d in site.diagnostics
                                         if d.status == "manual"), "manual"))
        ns: dict = {}
        code = (result.new_data or text.encode()).decode()
        exec(compile(code, f"<domain of {entry.id} (MindSpore)>", "exec"), ns)   # noqa: S102
        return ns, left

    def _judge_case(self, fn, case: Case, torch_run, ms) -> str:
        from recompat.compat.table import _first_line, _no_kernel, retry_on_mindspore

        outputs, refs, grad_run, ref_grads = torch_run
        xs = [ms.Tensor(x) for x in case.tensors]
        try:
            m_out = retry_on_mindspore(lambda: [_numpy(o) for o in _flat(fn(*xs))], ms)
        except Exception as exc:   # noqa: BLE001
            return (f"no kernel: {_first_line(exc)}" if _no_kernel(exc)
                    else f"differs: MindSpore raises {type(exc).__name__}: {_first_line(exc)}")
        try:
            if len(m_out) != len(outputs):
                raise _Differs(f"torch gives {len(outputs)} output(s), MindSpore {len(m_out)}")
            for k, (t, m, r) in enumerate(zip(outputs, m_out, refs)):
                _judge(f"output {k}" if len(outputs) > 1 else "the output", t, m, r)
            if grad_run is not None:
                inputs, weights, grads = grad_run
                m_grads = self._mindspore_gradients(fn, xs, inputs, weights, ms)
                for k, (t, m, r) in enumerate(zip(grads, m_grads, ref_grads)):
                    _judge(f"the gradient of t{inputs[k]}", t, m, r)
        except _Differs as d:
            return f"differs: {d}"
        except _LessPrecise as d:
            return f"less precise: {d}"
        except Exception as exc:   # noqa: BLE001 -- MindSpore's backward
            return (f"no kernel: backward: {_first_line(exc)}" if _no_kernel(exc)
                    else f"differs: MindSpore's backward raises {type(exc).__name__}: {_first_line(exc)}")
        return "agrees"

    @staticmethod
    def _mindspore_gradients(fn, xs, inputs, weights, ms) -> list[np.ndarray]:
        from recompat.compat.table import retry_on_mindspore

        def loss(*given):
            args = list(xs)
            for k, x in zip(inputs, given):
                args[k] = x
            outs = _flat(fn(*args))
            return sum((outs[k] * ms.Tensor(w).astype(outs[k].dtype)).sum() for k, w in weights.items())

        def grads():
            g = ms.grad(loss, grad_position=tuple(range(len(inputs))))(*[xs[k] for k in inputs])
            return [_numpy(x) for x in _flat(g)]

        return retry_on_mindspore(grads, ms)


def _flat(result) -> list:
    if isinstance(result, (tuple, list)):
        return [x for r in result for x in _flat(r)]
    return [result]


def _graded(out: list) -> list[int]:
    """The outputs a gradient is asked of: torch's real floating outputs that need one."""
    return [k for k, t in enumerate(out) if getattr(t, "requires_grad", False) and not t.is_complex()]


def _weights(outputs: list[np.ndarray], graded: list[int]) -> dict[int, np.ndarray]:
    """Fixed weights, not all ones, so that a gradient summed over the wrong axis shows."""
    rng = np.random.default_rng(1)
    return {k: rng.uniform(0.5, 1.5, outputs[k].shape).astype(outputs[k].dtype) for k in graded}


def _gradients(torch, out: list, ts: list, inputs: list[int], weights: dict) -> list[np.ndarray]:
    loss = sum((out[k] * torch.tensor(w, dtype=out[k].dtype)).sum() for k, w in weights.items())
    found = torch.autograd.grad(loss, [ts[k] for k in inputs], allow_unused=True)
    return [_numpy(g) if g is not None else np.zeros(ts[k].shape, _numpy(ts[k]).dtype)
            for g, k in zip(found, inputs)]


# -- the record ----------------------------------------------------------------------------------------------------

def probed_entries(maps) -> list:
    """The entries probed over a domain: the proven function and Tensor-method entries translated from torch that
    draw nothing (a random function, an initializer and dropout are proven by the distribution they draw, or
    the masks replayed)."""
    return [e for e in maps.entries if e.rule in RULES and e.source in ("torch", "both")
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


def kinds(parts: dict[str, str]) -> dict[str, str]:
    """What --check holds an entry to: each part's outcome kind, not its wording."""
    return {p: next(k for k in OUTCOMES if o.startswith(k)) for p, o in parts.items()}


def probe_all(entries: list, say=print) -> dict[str, Domain]:
    """Each entry probed in this process; one the probe cannot handle gets a reason, never a crash of the run."""
    runner, found = Runner(), {}
    for n, entry in enumerate(entries, 1):
        try:
            found[entry.id] = runner.probe_entry(entry)
        except Exception as exc:   # noqa: BLE001
            found[entry.id] = Domain(entry.id, entry.torch["api"],
                                     reason=f"the probe failed: {type(exc).__name__}: {str(exc)[:200]}")
        if n % 25 == 0 or n == len(entries):
            say(f"domain: {n}/{len(entries)} entries probed")
    return found


def prove(entries: list, maps, folder: Path | None = None, *, check: bool = False, say=print) -> int:
    """`recompat prove`'s domain step: probe `entries` (those of them :func:`probed_entries` takes) and record
    their outcomes in the folder's domain.json, the other entries' records kept; with ``check``, write nothing
    and return 1 where an outcome's kind changed (or an entry has no record). 0 otherwise."""
    from recompat._files import write_atomic

    path = (folder or MAPPINGS) / DOMAIN_FILE
    before = recorded(path)
    taken = {e.id for e in probed_entries(maps)}
    todo = [e for e in entries if e.id in taken]
    if not todo:
        return 0
    found = probe_all(todo, say=say)
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
    merged = {k: Domain(k, v.get("api", ""), dict(v.get("parts", {})), v.get("reason", ""))
              for k, v in before.items() if k in taken}
    merged.update(found)
    text = record_text(merged)
    if not (path.is_file() and path.read_bytes() == text):
        write_atomic(path, text)
        say(f"domain: recorded {path}")
    return 0
