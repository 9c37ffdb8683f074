"""The official mapping table, run: each row of MindSpore's "PyTorch and MindSpore API Mapping Table"
(mappings/table/pytorch_api_mapping.csv) gets a probe generated from the torch API's signature, made on both
frameworks with the same inputs, and a verdict with its evidence.

A probe: the parameters and defaults come from torch's signature (inspect, or the first line of its docstring for
a built-in); each parameter without a default gets what mappings/table/probes.yaml says for its name (a tensor drawn
from a fixed seed, or a value); the call is made on torch and on the row's MindSpore API (positionally, keywords
by torch's names), then once more for each parameter with a default that probes.yaml has another value for. Outputs
are compared value by value (torch.testing's tolerances for the dtype; integers and bools exactly) and by dtype;
where the output is floating, so are the gradients of a fixed weighted sum of it with respect to each floating
tensor input.

Verdicts: agrees (the largest error, the calls tried), differs (the call, what differs, the largest error),
no kernel (MindSpore has the API but no kernel for it on this device), missing (the API is not in the installed
MindSpore or torch), not probed (why), out of scope (why). A bad row gets a verdict and a reason, never a crash.
"""
from __future__ import annotations

import ast
import csv
import functools
import importlib
import inspect
import math
import re
import warnings
from dataclasses import asdict, dataclass, field
from pathlib import Path

import numpy as np

from recompat.mappings import HERE as MAPPINGS, TABLE_VERDICTS

TABLE = MAPPINGS / "table" / "pytorch_api_mapping.csv"
PROBES = MAPPINGS / "table" / "probes.yaml"
# Sections the table has that a probe of one process on one device cannot run, and why
OUT_OF_SCOPE = {
    "torchvision": "torchvision's datasets and transforms: not part of torch, not installed with recompat",
    "torchaudio": "torchaudio: not part of torch, not installed with recompat",
    "torchtext": "torchtext: not part of torch (and retired upstream), not installed with recompat",
    "torch.distributed": "collective communication: needs several processes and a backend, not one CPU process",
}
# Sections whose rows are not functions of tensors or layers: probed by other means, in later slices of the work
NOT_FUNCTIONS = {
    "torch.optim": "an optimizer: compared over training steps, as compare_training does (not yet)",
    "torch.utils": "data loading and samplers, or checkpointing (recompat's own subject): not a function of tensors",
}
VERDICTS = ("agrees", "differs", "no kernel", "missing", "not probed", "out of scope")
SEED = 0


@dataclass(frozen=True)
class Row:
    section: str
    torch_api: str
    mindspore_api: str
    official: str


@dataclass
class Verdict:
    section: str
    torch_api: str
    mindspore_api: str
    official: str
    verdict: str
    reason: str = ""
    max_error: float | None = None
    tried: list[str] = field(default_factory=list)   # the calls made, as text
    # where float32 agrees: the defaults' call again with the floating inputs of each other dtype torch takes
    # (DTYPES): "agrees", "differs: ...", "no kernel: ..."
    dtypes: dict[str, str] = field(default_factory=dict)
    # where a function or Tensor method agrees: the evidence the translator draws on (recompat.mappings.table_entries):
    # {"torch": its signature, "mindspore": its signature, "tried": the parameters the agreeing calls gave}
    call: dict = field(default_factory=dict)

    def as_dict(self) -> dict:
        return asdict(self)


class TableError(Exception):
    """A table or probe file that cannot be read: the message names it and says what to do."""


def read_rows(path: Path = TABLE) -> list[Row]:
    try:
        with open(path, newline="", encoding="utf-8") as f:
            reader = csv.DictReader(f)
            missing = {"section", "torch_api", "mindspore_api", "official_status"} - set(reader.fieldnames or ())
            if missing:
                raise TableError(f"{path}: no column {', '.join(sorted(missing))}: the table needs section, "
                                 f"torch_api, mindspore_api and official_status")
            return [Row(r["section"].strip(), r["torch_api"].strip(), r["mindspore_api"].strip(),
                        r["official_status"].strip()) for r in reader]
    except OSError as exc:
        raise TableError(f"{path}: cannot read the table ({exc.strerror})") from None


def read_probes(path: Path = PROBES) -> dict:
    import yaml

    try:
        data = yaml.safe_load(path.read_text(encoding="utf-8"))
    except (OSError, yaml.YAMLError) as exc:
        raise TableError(f"{path}: cannot read the probe specs ({exc})") from None
    if not isinstance(data, dict) or not isinstance(data.get("params"), dict):
        raise TableError(f"{path}: expected a mapping with `tensor`, `never`, `params` and `apis`")
    return data


# -- resolving names and signatures ------------------------------------------------------------

def resolve(qual: str):
    """The object a dotted name names (the longest importable module, then attributes); None if there is none."""
    parts = qual.split(".")
    for i in range(len(parts), 0, -1):
        try:
            obj = importlib.import_module(".".join(parts[:i]))
        except Exception:   # noqa: BLE001 -- a module that fails to import is as good as missing here
            continue
        try:
            for p in parts[i:]:
                obj = getattr(obj, p)
        except AttributeError:
            return None
        return obj
    return None


@dataclass(frozen=True)
class Param:
    name: str
    default: str | None       # the default's source text; None: required
    keyword_only: bool
    varargs: bool = False     # `*operands`: what it is given is spread into the call
    positional_only: bool = False


def torch_signature(fn, method: bool) -> list[Param] | None:
    """The parameters of a torch function or Tensor method (a method's without its receiver): inspect's, else the
    first line of the docstring (`abs(input, *, out=None) -> Tensor`), the form torch documents built-ins with."""
    try:
        sig = inspect.signature(fn)
        # `*tensors` (meshgrid) is given as one positional, a list, as torch takes it too
        out = [Param(p.name, None if p.default is inspect.Parameter.empty else repr(p.default),
                     p.kind is inspect.Parameter.KEYWORD_ONLY, p.kind is p.VAR_POSITIONAL)
               for p in sig.parameters.values() if p.kind is not p.VAR_KEYWORD]
        if all(p.kind in (p.VAR_POSITIONAL, p.VAR_KEYWORD) for p in sig.parameters.values()):
            if inspect.isclass(fn):
                return []   # a layer that takes anything and needs nothing (nn.Identity, nn.Tanh)
            raise ValueError("only *args, **kwargs: the docstring tells more")
        return out[1:] if method and out and out[0].name == "self" else out
    except (TypeError, ValueError):
        pass
    line = (getattr(fn, "__doc__", None) or "").strip().split("\n", 1)[0].replace("\\*", "*")
    head = line.split("->", 1)[0].strip()
    if not (head.endswith(")") and "(" in head and head[:head.index("(")].replace(".", "_").isidentifier()):
        return None
    out, keyword_only = [], False
    for piece in _top_level_split(head[head.index("(") + 1:-1]):
        if piece == "*":
            keyword_only = True
            continue
        name, _, default = piece.partition("=")
        name = name.split(":", 1)[0].strip()
        if not name.lstrip("*").isidentifier():
            return None
        out.append(Param(name.lstrip("*"), default.strip() or None, keyword_only, name.startswith("*")))
    return out[1:] if method and out and out[0].name == "self" else out


def _signature_text(name: str, params: list[Param]) -> str:
    """`cumprod(input, dim, *, dtype=None)`: a parameter list written as a def's head."""
    parts, starred = [], False
    for i, p in enumerate(params):
        if p.keyword_only and not starred:
            parts.append("*")
        starred = starred or p.varargs or p.keyword_only
        parts.append(f"*{p.name}" if p.varargs else p.name if p.default is None else f"{p.name}={p.default}")
        if p.positional_only and not (i + 1 < len(params) and params[i + 1].positional_only):
            parts.append("/")
    return f"{name}({', '.join(parts)})"


def _mindspore_signature(fn, method: bool) -> list[Param] | None:
    """MindSpore's parameters as inspect reads them (a method's without its receiver); None where it does not, or
    where they are only *args and **kwargs."""
    try:
        found = list(inspect.signature(fn).parameters.values())
    except (TypeError, ValueError):
        return None
    if method and found and found[0].name == "self":
        found = found[1:]
    if any(p.kind is p.VAR_KEYWORD for p in found):
        return None
    return [Param(p.name, None if p.default is inspect.Parameter.empty else repr(p.default),
                  p.kind is p.KEYWORD_ONLY, p.kind is p.VAR_POSITIONAL, p.kind is p.POSITIONAL_ONLY) for p in found]


def _call_record(row: Row, torch_params: list[Param], m_fn, method: bool, tried: list[str]) -> dict:
    """What an agreeing function's calls showed, for the translator (Verdict.call): both signatures, and the torch
    parameters the agreeing calls gave (the required ones positionally, each other one by keyword). Empty where
    MindSpore's signature cannot be read (a name given by keyword might not bind there), or where a signature holds
    a default that is not Python source (`<object ...>`): nothing the translator can go by."""
    m_params = _mindspore_signature(m_fn, method)
    if m_params is None:
        return {}
    texts = {"torch": _signature_text(row.torch_api.rsplit(".", 1)[1], torch_params),
             "mindspore": _signature_text(row.mindspore_api.rsplit(".", 1)[1], m_params)}
    for text in texts.values():
        try:
            ast.parse(f"def {text}: pass")
        except SyntaxError:
            return {}
    return {**texts, "tried": list(dict.fromkeys(tried))}


def _top_level_split(text: str) -> list[str]:
    """`a, b=(1, 2), *, c=None` -> ["a", "b=(1, 2)", "*", "c=None"]: commas inside brackets stay."""
    pieces, depth, start = [], 0, 0
    for i, ch in enumerate(text):
        depth += ch in "([{"
        depth -= ch in ")]}"
        if ch == "," and depth == 0:
            pieces.append(text[start:i].strip())
            start = i + 1
    pieces.append(text[start:].strip())
    return [p for p in pieces if p]


# -- making the inputs -------------------------------------------------------------------------

class NoInput(Exception):
    """No spec says what to give a required parameter."""


def _array(spec: dict, base: dict, rng: np.random.Generator) -> np.ndarray:
    s = {**base, **spec}
    shape, dtype = tuple(s["shape"]), s["dtype"]
    if dtype == "bool":
        return rng.random(shape) < 0.5
    if dtype.startswith("int"):
        return rng.integers(int(s["low"]), int(s["high"]), shape).astype(dtype)
    return rng.uniform(s["low"], s["high"], shape).astype(dtype)


def _arg(spec: dict, base: dict, rng):
    """A parameter's input: ("tensor", array), ("constant", array) for a tensor no gradient is asked of
    (`requires_grad: false`: BatchNorm's running statistics), ("tensors", [arrays]) or ("value", python value)."""
    if "tensor" in spec:
        t = spec["tensor"] or {}
        return ("tensor" if t.get("requires_grad", True) else "constant"), _array(t, base, rng)
    if "tensors" in spec:   # a count of tensors as `tensor` says, or a list of their specs
        n = spec["tensors"]
        return "tensors", [_array(t, base, rng) for t in (n if isinstance(n, list) else [{}] * int(n))]
    value = spec["value"]
    return "value", tuple(value) if isinstance(value, list) else value   # torch documents sizes and dims as tuples


def _other_value(default: str):
    """A value other than a default, of its kind (the source text of a bool, int or float): the other bool, the next
    int, half a float (0.5 for 0); None for anything else (None, a string, a tuple: no value to guess)."""
    value = _literal(default)
    if isinstance(value, bool):
        return not value
    if isinstance(value, int):
        return value + 1
    if isinstance(value, float) and math.isfinite(value):
        return value / 2 if value else 0.5
    return None


def _parameter_names(fn) -> set[str] | None:
    """The names of the parameters MindSpore's API takes; None where its signature does not tell (*args,
    **kwargs, or none readable): then every torch parameter is tried."""
    try:
        params = inspect.signature(fn).parameters.values()
    except (TypeError, ValueError):
        return None
    if any(p.kind in (p.VAR_POSITIONAL, p.VAR_KEYWORD) for p in params):
        return None
    return {p.name for p in params}


def _literal(text: str):
    try:
        return ast.literal_eval(text)
    except (ValueError, SyntaxError):
        return text


# -- running a call on each side ---------------------------------------------------------------

def _on_torch(kind, value, torch, grad: bool = True):
    if kind == "constant":
        return torch.tensor(value)
    if kind == "tensor":
        t = torch.tensor(value)
        return t.requires_grad_() if grad and t.is_floating_point() else t
    if kind == "tensors":
        return [_on_torch("tensor", v, torch, grad) for v in value]
    return value


def _on_mindspore(kind, value, ms):
    if kind in ("tensor", "constant"):
        return ms.Tensor(value)
    if kind == "tensors":
        return [ms.Tensor(v) for v in value]
    return value


def _outputs(result) -> list:
    """A call's result as a flat list (a tuple of tensors, a named tuple, one tensor, a number)."""
    if isinstance(result, (tuple, list)):
        return [x for r in result for x in _outputs(r)]
    return [result]


def _numpy(x) -> np.ndarray:
    if hasattr(x, "detach"):
        return x.detach().numpy()
    if hasattr(x, "asnumpy"):
        return x.asnumpy()
    return np.asarray(x)


def _first_line(exc: Exception) -> str:
    """The first line of an error's message that says something (MindSpore's may start with blank lines and
    rules of dashes)."""
    return next((line.strip() for line in str(exc).splitlines() if line.strip(" -")), type(exc).__name__)[:160]


# how MindSpore 2.10 says an op has no kernel on the device (CPU): "The kernel AcosExt unregistered.",
# "conv3d only supports Ascend.", "Not found op FuncMaxPool2D on device CPU", "Create kernelmod for op LayerNormExt
# failed", "Select CPU operator[Sin] fail! Unsupported data type!" (a kernel, not for this dtype)
_NO_KERNEL = re.compile(r"unregistered|only supports? Ascend|Not found op \w+ on device|not supported on (?:CPU|GPU)"
                        r"|Kernel select failed|Create kernelmod for op \w+ failed"
                        r"|Select (?:CPU|GPU) operator\[\w+\] fail! Unsupported data type")


def _no_kernel(exc: Exception) -> bool:
    return _NO_KERNEL.search(str(exc)) is not None


DTYPES = ("float16", "int64", "bool")   # tried beside float32 where a row agrees


def _floating(value) -> bool:
    values = value if isinstance(value, list) else [value]
    return all(isinstance(v, np.ndarray) and np.issubdtype(v.dtype, np.floating) for v in values)


def _as_dtype(value, dtype: str):
    """A floating input (an array, or a list of them) in another dtype: float16 as it is; int64 as small integers
    (1 to 9 from the probes' uniform inputs); bool true above the median."""
    if isinstance(value, list):
        return [_as_dtype(v, dtype) for v in value]
    if dtype == "bool":
        return value > np.median(value)
    if dtype == "int64":
        return np.rint(value * 10).astype(np.int64)
    return value.astype(dtype)


class _Differs(Exception):
    def __init__(self, what: str, error: float | None = None):
        super().__init__(what)
        self.what, self.error = what, error


def _compare(t_out: list, m_out: list) -> float:
    """The largest error between the outputs; raises _Differs where they differ in number, shape, dtype or value."""
    from recompat.compat.compare import default_tolerance

    if len(t_out) != len(m_out):
        raise _Differs(f"torch gives {len(t_out)} outputs, MindSpore {len(m_out)}")
    worst = 0.0
    for i, (t, m) in enumerate(zip(t_out, m_out)):
        a, b = _numpy(t), _numpy(m)
        if a.shape != b.shape:
            raise _Differs(f"output {i}: shape {a.shape} on torch, {b.shape} on MindSpore")
        if a.dtype != b.dtype and not (a.dtype == np.float64 and b.dtype == np.float32 and a.ndim == 0):
            raise _Differs(f"output {i}: dtype {a.dtype} on torch, {b.dtype} on MindSpore")
        if a.size == 0:
            continue
        rtol, atol = default_tolerance(str(a.dtype))
        if a.dtype == bool or np.issubdtype(a.dtype, np.integer):
            bad = a != b
            err = float(np.max(np.abs(a.astype(np.float64) - b.astype(np.float64))))
        else:
            a64, b64 = a.astype(np.float64), b.astype(np.float64)
            bad = ~np.isclose(b64, a64, rtol=rtol, atol=atol, equal_nan=True)
            both = np.isfinite(a64) & np.isfinite(b64)
            err = float(np.max(np.abs(a64 - b64)[both])) if both.any() else 0.0
        if bad.any():
            lone = bad & (np.isfinite(a.astype(np.float64)) != np.isfinite(b.astype(np.float64)))
            if lone.any():   # NaN or infinity on one side only: no error to measure there
                raise _Differs(f"output {i}: {int(lone.sum())} value(s) NaN or infinite on one side only, finite "
                               f"on the other", err)
            raise _Differs(f"output {i}: values differ (largest error {err:.3g})", err)
        worst = max(worst, err)
    return worst


def _compare_draws(t_out: list, m_out: list) -> float:
    """Random outputs: the same number, shapes and dtypes, and values drawn from the same distribution (two-sample
    Kolmogorov-Smirnov at compat.examples.KS_ALPHA: the frameworks' generators differ, so never value by value).
    Returns the largest distance; raises _Differs."""
    from recompat.compat.examples import KS_ALPHA, KS_FACTOR, ks_distance

    if len(t_out) != len(m_out):
        raise _Differs(f"torch gives {len(t_out)} outputs, MindSpore {len(m_out)}")
    worst = 0.0
    for i, (t, m) in enumerate(zip(t_out, m_out)):
        a, b = _numpy(t), _numpy(m)
        if a.shape != b.shape or a.dtype != b.dtype:
            raise _Differs(f"output {i}: {a.dtype} {a.shape} on torch, {b.dtype} {b.shape} on MindSpore")
        distance, critical = ks_distance(a, b), KS_FACTOR * math.sqrt((a.size + b.size) / (a.size * b.size))
        if distance >= critical:
            raise _Differs(f"output {i}: another distribution (two-sample Kolmogorov-Smirnov distance "
                           f"{distance:.3g} >= {critical:.3g}, level {KS_ALPHA:g}; mean {a.mean():.3g} vs "
                           f"{b.mean():.3g}, std {a.std():.3g} vs {b.std():.3g})")
        worst = max(worst, distance)
    return worst


class Probe:
    """The probes of one table: torch and MindSpore imported once, the specs read once."""

    def __init__(self, specs: dict):
        self.specs = specs
        self.base = specs.get("tensor", {})
        self.never = set(specs.get("never", ()))

    def row(self, row: Row) -> Verdict:
        v = Verdict(row.section, row.torch_api, row.mindspore_api, row.official, "not probed")
        if row.section in OUT_OF_SCOPE:
            v.verdict, v.reason = "out of scope", OUT_OF_SCOPE[row.section]
            return v
        if row.section in NOT_FUNCTIONS:
            v.reason = NOT_FUNCTIONS[row.section]
            return v
        try:
            with warnings.catch_warnings():   # torch's deprecation notes about the generated calls: not the user's
                warnings.simplefilter("ignore")
                self._probe(row, v)
        except NoInput as exc:
            v.verdict, v.reason = "not probed", str(exc)
        except Exception as exc:   # noqa: BLE001 -- a bad row gets a verdict, never a crash
            v.verdict, v.reason = "not probed", f"the probe failed: {type(exc).__name__}: {str(exc)[:200]}"
        return v

    @functools.cached_property
    def torch(self):
        import torch

        return torch

    @functools.cached_property
    def ms(self):
        import mindspore as ms

        ms.set_context(mode=ms.PYNATIVE_MODE)   # process-global: the probes run eagerly
        return ms

    def _probe(self, row: Row, v: Verdict) -> None:
        api_spec = self.specs.get("apis", {}).get(row.torch_api, {})
        if "skip" in api_spec:
            v.reason = api_spec["skip"]
            return
        method = row.torch_api.startswith("torch.Tensor.")
        t_fn, m_fn = resolve(row.torch_api), resolve(row.mindspore_api) if row.mindspore_api else None
        if t_fn is None:
            v.verdict, v.reason = "missing", f"torch {self.torch.__version__} has no {row.torch_api}"
            return
        if m_fn is None:
            v.verdict, v.reason = "missing", f"MindSpore {self.ms.__version__} has no {row.mindspore_api or 'API here'}"
            return
        layer = inspect.isclass(t_fn) and issubclass(t_fn, self.torch.nn.Module)
        if layer:   # its constructor's parameters; the forward inputs are probes.yaml's `forward`
            params = torch_signature(t_fn, False)
        else:
            # a Tensor method's docstring often leaves its parameters out (`logical_and() -> Tensor`): the function
            # of the same name documents them, its first parameter being the receiver
            function = resolve(f"torch.{t_fn.__name__}") if method else None
            params = torch_signature(function, False) if function is not None else None
            params = params[1:] if params and params[0].name == "input" else torch_signature(t_fn, method)
        if params is None:
            v.reason = f"torch's signature of {row.torch_api} cannot be read (no signature, no docstring form)"
            return
        signature = params
        params = [p for p in params if p.name not in self.never]
        names = (["self"] if method else []) + [p.name for p in params]
        self._spread = {p.name for p in params if p.varargs}
        self._names = (row.torch_api.rsplit(".", 1)[1], row.mindspore_api.rsplit(".", 1)[1])   # methods' names
        given, tries = self._inputs(row.torch_api, params, api_spec, method, _parameter_names(m_fn))
        self._grad = not row.torch_api.endswith("_")   # an in-place op on a leaf that requires grad: torch refuses
        self._draws = bool(api_spec.get("draws"))      # random: compared by distribution, no gradient
        if layer:
            rng = np.random.default_rng(SEED + 2)
            arrays = [_array(spec or {}, self.base, rng) for spec in api_spec.get("forward", [{}])]
            shapes = ", ".join("x".join(map(str, a.shape)) or "scalar" for a in arrays)
            call = lambda extra: self._call_layer(t_fn, m_fn, given, extra, names, arrays)   # noqa: E731
        else:
            shapes = None
            call = lambda extra: self._call(t_fn, m_fn, method, given, extra, names)   # noqa: E731
        tried = self._run(row, v, given, tries, call, shapes)
        if v.verdict == "agrees" and not layer and not self._draws:
            v.dtypes = self._dtypes(given, lambda inputs: self._call(t_fn, m_fn, method, inputs, {}, names))
            v.call = _call_record(row, signature, m_fn, method, [n for n in given if n != "self"] + tried)

    def _dtypes(self, given: dict, call) -> dict[str, str]:
        """The defaults' call with the floating inputs in each of DTYPES (no gradients): a dtype torch refuses
        is left out (the API does not take it)."""
        floating = {k for k, (kind, value) in given.items()
                    if kind in ("tensor", "constant", "tensors") and _floating(value)}
        found = {}
        if not floating:
            return found
        grad, self._grad = self._grad, False
        try:
            for dtype in DTYPES:
                inputs = {k: (kind, _as_dtype(value, dtype) if k in floating else value)
                          for k, (kind, value) in given.items()}
                try:
                    call(inputs)
                    found[dtype] = "agrees"
                except _TorchRefuses:
                    continue
                except _NoKernel as k:
                    found[dtype] = f"no kernel: {k}"
                except _Differs as d:
                    found[dtype] = f"differs: {d.what}"
        finally:
            self._grad = grad
        return found

    def _run(self, row: Row, v: Verdict, given: dict, tries: list, call, shapes: str | None) -> list[str]:
        """The calls (defaults, then each value to try), each made on both sides by `call`, and the verdict; the
        parameters with a default whose tried value was taken on both sides."""
        calls = [({}, "defaults")] + [({p.name: _literal(str(value)) if isinstance(value, str) else value},
                                        f"{p.name}={value}") for p, value in tries]
        worst, graded, taken = 0.0, False, []
        for extra, label in calls:
            text = f"{row.torch_api}({', '.join([*given, *(f'{k}={x!r}' for k, x in extra.items())])})"
            v.tried.append(text if shapes is None else f"{text} on inputs of shape {shapes}")
            try:
                error, with_grad = call(extra)
                worst, graded = max(worst, error), graded or with_grad
                taken += extra
            except _Differs as d:
                v.verdict, v.reason, v.max_error = "differs", f"{label}: {d.what}", d.error
                return []
            except _NoKernel as k:
                v.verdict, v.reason = "no kernel", f"{label}: {k}"
                return []
            except _NotPaired as n:
                v.reason = str(n)
                return []
            except _TorchRefuses as r:
                if label == "defaults":
                    v.reason = f"torch refuses the generated inputs ({r}): give others in mappings/table/probes.yaml"
                    return []
                v.tried.pop()   # a value torch does not take with these inputs: no evidence either way
        v.verdict, v.max_error = "agrees", None if self._draws else worst
        v.reason = (f"{len(v.tried)} call(s): outputs drawn from the same distribution (two-sample "
                    f"Kolmogorov-Smirnov), of the same shapes and dtypes" if self._draws else
                    f"{len(v.tried)} call(s): outputs{' and gradients' if graded else ''} the same within "
                    f"torch.testing's tolerances")
        return taken

    def _inputs(self, api: str, params: list[Param], api_spec: dict, method: bool,
                shared: set | None = None) -> tuple[dict, list]:
        """(what each parameter without a default is given: name -> (kind, value); the (parameter, value) pairs to
        try one call each: probes.yaml's `try`, else another value of the default's kind, for each parameter
        MindSpore's API takes too (`shared`; None: every one)). An API's own spec may also give a parameter that
        has a default (torch.clamp's min)."""
        shared = shared if shared is not None else {p.name for p in params}
        specs = {**self.specs["params"], **{k: s for k, s in api_spec.items() if isinstance(s, dict)}}
        rng = np.random.default_rng(SEED)
        given, tries = {}, []
        for name, p in [("self", None)] * method + [(p.name, p) for p in params]:
            spec = specs.get(name, {})
            forced = isinstance(api_spec.get(name), dict) and ({"tensor", "tensors", "value"} & set(api_spec[name]))
            if p is not None and p.default is not None and not forced:
                other = spec["try"] if "try" in spec else _other_value(p.default)
                if other is not None and name in shared:
                    tries.append((p, other))
                continue
            if not ({"tensor", "tensors", "value"} & set(spec)):
                raise NoInput(f"no input for parameter {name!r} of {api}: give one in mappings/table/probes.yaml "
                              f"(params: or apis:)")
            given[name] = _arg(spec, self.base, rng)
        return given, tries

    def _positional(self, args: dict, order: list[str]) -> list:
        """The call's positional arguments in order, a `*varargs` parameter's spread."""
        out = []
        for n in order:
            value = args[n]
            out += list(value) if n in self._spread and isinstance(value, (list, tuple)) else [value]
        return out

    def _on_mindspore(self, call, part: str = ""):
        """call() on MindSpore (_on_mindspore_twice), its failure made a verdict's evidence: no kernel, else a
        difference. `part`: "backward" or "constructor" where the call is that, not the API's call itself."""
        try:
            return self._on_mindspore_twice(call)
        except Exception as exc:   # noqa: BLE001
            if part != "constructor" and _no_kernel(exc):
                raise _NoKernel(f"{part}: {_first_line(exc)}" if part else _first_line(exc)) from None
            who = f"MindSpore's {part}" if part else "MindSpore"
            raise _Differs(f"{who} raises {type(exc).__name__}: {_first_line(exc)}") from None

    def _on_mindspore_twice(self, call):
        return retry_on_mindspore(call, self.ms)

    def _call(self, t_fn, m_fn, method: bool, given: dict, extra: dict, names: list[str]) -> tuple[float, bool]:
        """(the largest error, whether gradients were compared) of one call made on both sides."""
        torch, ms = self.torch, self.ms
        t_args = {k: _on_torch(kind, value, torch, self._grad) for k, (kind, value) in given.items()}
        m_args = {k: _on_mindspore(kind, value, ms) for k, (kind, value) in given.items()}
        order = [n for n in names if n in given]
        torch.manual_seed(SEED)
        ms.set_seed(SEED)
        try:
            t_res = _invoke(t_fn, method and self._names[0], self._positional(t_args, order), extra)
        except Exception as exc:   # noqa: BLE001
            raise _TorchRefuses(f"{type(exc).__name__}: {_first_line(exc)}") from None

        def mindspore_call():
            out = _outputs(_invoke(m_fn, method and self._names[1], self._positional(m_args, order), extra))
            for m in out:
                _numpy(m)   # a kernel may fail only when the value is read
            return out

        m_out = self._on_mindspore(mindspore_call)
        t_out = _outputs(t_res)
        if self._draws:
            return _compare_draws(t_out, m_out), False
        worst = _compare(t_out, m_out)
        floating = [i for i, t in enumerate(t_out)   # real floating outputs (autograd takes no complex loss)
                    if hasattr(t, "requires_grad") and t.requires_grad and not t.is_complex()]
        inputs = [n for n in order if given[n][0] == "tensor" and np.issubdtype(given[n][1].dtype, np.floating)]
        if not (floating and inputs and self._grad):
            return worst, False
        return max(worst, self._gradients(t_args, t_out, m_fn, method, given, extra, order, inputs, floating)), True

    def _call_layer(self, t_cls, m_cls, given: dict, extra: dict, names: list[str], arrays: list) -> tuple[float, bool]:
        """A layer built on each side from the same arguments, given torch's parameters and buffers (by name), run
        on the same inputs in training mode: (the largest error of the outputs and of the gradients of a fixed
        weighted sum with respect to the floating inputs and the parameters, True)."""
        torch, ms = self.torch, self.ms
        order = [n for n in names if n in given]
        t_args = {k: _on_torch(kind, value, torch, False) for k, (kind, value) in given.items()}
        m_args = {k: _on_mindspore(kind, value, ms) for k, (kind, value) in given.items()}
        torch.manual_seed(SEED)
        ms.set_seed(SEED)
        try:
            t_layer = t_cls(*self._positional(t_args, order), **extra)
            xs = [_on_torch("tensor", a, torch) for a in arrays]
            t_out = _outputs(t_layer(*xs))
        except Exception as exc:   # noqa: BLE001
            raise _TorchRefuses(f"{type(exc).__name__}: {_first_line(exc)}") from None
        t_params = dict(t_layer.named_parameters())
        t_tensors = {**dict(t_layer.named_buffers()), **t_params}

        def build():
            layer = m_cls(*self._positional(m_args, order), **extra)
            if not isinstance(layer, ms.nn.Cell):
                raise TypeError(f"{type(layer).__name__} is no Cell: the row names no layer")
            return layer

        m_layer = self._on_mindspore(build, "constructor")
        m_params = dict(m_layer.parameters_and_names())
        if set(t_params) - set(m_params):
            raise _NotPaired(f"the parameters cannot be paired by name: torch's {', '.join(t_tensors)}, "
                             f"MindSpore's {', '.join(m_params) or 'none'}")
        extra = sorted(n for n, p in m_params.items() if n not in t_tensors and p.requires_grad)
        if extra:
            raise _Differs(f"MindSpore's layer trains parameters torch's has not: {', '.join(extra)}")
        for name, p in m_params.items():
            if name in t_tensors:
                p.set_data(ms.Tensor(t_tensors[name].detach().numpy()))
        m_layer.set_train(True)
        m_xs = [ms.Tensor(a) for a in arrays]
        m_out = self._on_mindspore(lambda: [_numpy(o) for o in _outputs(m_layer(*m_xs))])
        if self._draws:
            return _compare_draws(t_out, m_out), False
        worst = _compare(t_out, m_out)
        floating = [i for i, t in enumerate(t_out) if t.requires_grad and not t.is_complex()]
        if not floating:
            return worst, False
        weights = _weights(t_out, floating)
        loss = sum((t_out[i] * torch.tensor(w)).sum() for i, w in weights.items())
        inputs = [i for i, x in enumerate(xs) if x.requires_grad]
        names_ = list(t_params)
        t_grads = torch.autograd.grad(loss, [xs[i] for i in inputs] + [t_params[n] for n in names_], allow_unused=True)
        t_grads = [g if g is not None else torch.zeros_like(x)
                   for g, x in zip(t_grads, [xs[i] for i in inputs] + [t_params[n] for n in names_])]

        def forward(*given_xs):
            all_xs = list(m_xs)
            for i, x in zip(inputs, given_xs):
                all_xs[i] = x
            outs = _outputs(m_layer(*all_xs))
            return sum((outs[i] * ms.Tensor(w)).sum() for i, w in weights.items())

        def mindspore_grads():
            fn = ms.grad(forward, grad_position=tuple(range(len(inputs))) if inputs else None,
                         weights=[m_params[n] for n in names_] if names_ else None)
            return [_numpy(g) for g in _outputs(fn(*[m_xs[i] for i in inputs]))]

        m_grads = self._on_mindspore(mindspore_grads, "backward")
        try:
            return max(worst, _compare(list(t_grads), m_grads)), True
        except _Differs as d:
            what = ["input"] * len(inputs) + names_
            raise _Differs(f"gradients: {d.what}".replace("output ", "gradient of ") + f" (in order: "
                           f"{', '.join(what)})", d.error) from None

    def _gradients(self, t_args, t_out, m_fn, method, given, extra, order, inputs, floating) -> float:
        """The largest error of the gradients of a fixed weighted sum of the floating outputs (torch's from the
        call `_call` made) with respect to the floating tensor inputs."""
        torch, ms = self.torch, self.ms
        weights = _weights(t_out, floating)
        loss = sum((t_out[i] * torch.tensor(w)).sum() for i, w in weights.items())
        t_grads = torch.autograd.grad(loss, [t_args[n] for n in inputs], allow_unused=True)
        fixed = {k: _on_mindspore(kind, value, ms) for k, (kind, value) in given.items()}

        def forward(*xs):
            args = {**fixed, **dict(zip(inputs, xs))}
            outs = _outputs(_invoke(m_fn, method and self._names[1], self._positional(args, order), extra))
            return sum((outs[i] * ms.Tensor(w)).sum() for i, w in weights.items())

        def mindspore_grads():   # read here: a backward kernel may fail only when the values are
            grads = ms.grad(forward, grad_position=tuple(range(len(inputs))))(*[fixed[n] for n in inputs])
            return [_numpy(g) for g in _outputs(grads)]

        m_grads = self._on_mindspore(mindspore_grads, "backward")
        t_grads = [g if g is not None else torch.zeros_like(t_args[n]) for g, n in zip(t_grads, inputs)]
        try:
            return _compare(list(t_grads), m_grads)
        except _Differs as d:
            raise _Differs(f"gradients: {d.what}", d.error) from None


def retry_on_mindspore(call, ms):
    """call(), and where it raises, once more after a small op: MindSpore 2.10 in PyNative has failed an op that
    has a kernel with the error of an op that failed before it (a whole-table run: sigmoid after scatter_add,
    concat after clone), not every time; an op that runs in between clears that state. A failure that is
    the call's own comes again, with its own message."""
    try:
        return call()
    except Exception:   # noqa: BLE001
        _flush(ms)
    try:
        return call()
    except Exception:
        _flush(ms)   # the next call starts clean
        raise


def _flush(ms) -> None:
    for _ in range(3):
        try:
            (ms.Tensor(np.ones(1, np.float32)) + 1).asnumpy()
            return
        except Exception:   # noqa: BLE001 -- the stale error itself: try again
            continue


class _NoKernel(Exception):
    pass


class _NotPaired(Exception):
    """The two layers' parameters cannot be paired: no verdict."""


class _TorchRefuses(Exception):
    pass


def _weights(t_out: list, floating: list[int]) -> dict:
    """The fixed weights of the sum whose gradients are compared, one array per floating output (from a seed: the
    same on both sides; not all ones, so that a gradient summed over the wrong axis shows)."""
    rng = np.random.default_rng(SEED + 1)
    return {i: rng.uniform(0.5, 1.5, _numpy(t_out[i]).shape).astype(np.float32) for i in floating}


def _invoke(fn, method: str | bool, args: list, extra: dict):
    """fn(*args, **extra); for a Tensor method (`method` its name), the first argument's method."""
    if method:
        receiver, *rest = args
        return getattr(receiver, method)(*rest, **extra)
    return fn(*args, **extra)


def verify(rows: list[Row], specs: dict, progress=None) -> list[Verdict]:
    """A verdict per row, in the table's order; torch and MindSpore are imported at the first row that needs them."""
    probe, out = Probe(specs), []
    for i, row in enumerate(rows):
        out.append(probe.row(row))
        if progress is not None:
            progress(i + 1, len(rows), out[-1])
    return out


def summary(verdicts: list[Verdict]) -> dict[str, int]:
    counts = {k: 0 for k in VERDICTS}
    for v in verdicts:
        counts[v.verdict] += 1
    return counts


VERDICTS_FILE = MAPPINGS / TABLE_VERDICTS   # the loader reads it too (recompat.mappings.table_entries)
KIND = "recompat-table"   # what `recompat report` knows the JSON by


def recorded(path: Path = VERDICTS_FILE) -> dict[str, dict]:
    """The recorded verdicts (`verify-table --record`), by torch API; empty where none are recorded."""
    import json

    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except FileNotFoundError:
        return {}
    except (OSError, ValueError) as exc:
        raise TableError(f"{path}: cannot read the recorded verdicts ({exc}): run `recompat verify-table "
                         f"--record` to write them again") from None
    return {r["torch_api"]: r for r in data.get("rows", [])}


def _record_text(verdicts: list[Verdict]) -> bytes:
    """The recorded form: what decides a verdict, not the figures a machine may vary in (errors stay in --json)."""
    import json

    rows = [{"section": v.section, "torch_api": v.torch_api, "mindspore_api": v.mindspore_api,
             "official": v.official, "verdict": v.verdict, "reason": v.reason,
             **({"dtypes": v.dtypes} if v.dtypes else {}), **({"call": v.call} if v.call else {})} for v in verdicts]
    return (json.dumps({"kind": KIND, "summary": summary(verdicts), "rows": rows}, indent=1, ensure_ascii=False)
            + "\n").encode()


def dtype_outcomes(dtypes: dict, only_failing: bool = False) -> str:
    """A row's other-dtype outcomes as text ("float16: agrees; int64: no kernel: ..."), or those that do not agree."""
    return "; ".join(f"{d}: {outcome}" for d, outcome in dtypes.items()
                     if not (only_failing and outcome == "agrees"))


def _decided(row: dict) -> tuple:
    """What --check holds a row to: its verdict, per other dtype the outcome's kind (not its wording), and the
    signatures and parameters the translator takes from it."""
    call = row.get("call") or {}
    return (row.get("verdict"), tuple(sorted((d, o.split(":")[0]) for d, o in (row.get("dtypes") or {}).items())),
            (call.get("torch"), call.get("mindspore"), tuple(call.get("tried", ()))))


def _calls(call: tuple) -> str:
    torch, mindspore, tried = call
    return f"{torch} as {mindspore}, given {', '.join(tried) or 'nothing'}" if torch else "none"


def _kinds(dtypes: tuple) -> str:
    return ", ".join(f"{d} {o}" for d, o in dtypes) or "none"


def run(table: Path | None = None, apis: list[str] | None = None, json_path: Path | None = None,
        stdout=None, stderr=None, *, check: bool = False, record: bool = False, quiet: bool = False) -> int:
    """The `recompat verify-table` command: 0 done (whatever the verdicts; --check: none changed), 1 --check found
    a changed verdict, 2 bad input."""
    import json
    import sys

    stdout, stderr = stdout or sys.stdout, stderr or sys.stderr
    try:
        rows = read_rows(table or TABLE)
        specs = read_probes()
        before = recorded() if check else {}
    except TableError as exc:
        print(f"recompat: error: {exc}", file=stderr)
        return 2
    if apis:
        unknown = sorted(set(apis) - {r.torch_api for r in rows})
        if unknown:
            print(f"recompat: error: not a row of the table: {', '.join(unknown)} (give a torch_api of "
                  f"{table or TABLE})", file=stderr)
            return 2
        rows = [r for r in rows if r.torch_api in apis]

    def progress(done, total, v):
        if done % 50 == 0 or done == total:
            print(f"recompat: {done}/{total} rows", file=stderr)

    verdicts = verify(rows, specs, progress)
    for v in verdicts:
        if v.verdict != "out of scope" and not quiet:
            error = f" (largest error {v.max_error:.3g})" if v.max_error else ""
            dtypes = f"; {dtype_outcomes(v.dtypes)}" if v.dtypes else ""
            print(f"{v.torch_api} -> {v.mindspore_api or '-'}: {v.verdict}{error}: {v.reason}{dtypes}", file=stdout)
    counts = summary(verdicts)
    in_scope = len(verdicts) - counts["out of scope"]
    decided = in_scope - counts["not probed"]
    print(f"recompat: {len(verdicts)} rows: " + ", ".join(f"{n} {k}" for k, n in counts.items() if n)
          + f"; a verdict for {decided} of {in_scope} rows in scope ({100 * decided / max(in_scope, 1):.1f}%)",
          file=stderr)
    from recompat._files import write_atomic

    if json_path is not None:
        data = {"kind": KIND, "table": str(table or TABLE), "summary": counts, "rows": [v.as_dict() for v in verdicts]}
        write_atomic(json_path, (json.dumps(data, indent=1, ensure_ascii=False) + "\n").encode())
    if record:
        write_atomic(VERDICTS_FILE, _record_text(verdicts))
        print(f"recompat: recorded {len(verdicts)} verdicts in {VERDICTS_FILE}", file=stderr)
    if check:
        changed = [(v, before.get(v.torch_api)) for v in verdicts
                   if _decided(before.get(v.torch_api) or {}) != _decided(v.as_dict())]
        for v, old in changed:
            was, now = _decided(old or {}), _decided(v.as_dict())
            text = f"{was[0] or 'no recorded verdict'} -> {now[0]}"
            if was[1] != now[1]:
                text += f"; other dtypes: {_kinds(was[1])} -> {_kinds(now[1])}"
            if was[2] != now[2]:
                text += f"; the calls the translator takes from it: {_calls(was[2])} -> {_calls(now[2])}"
            print(f"recompat: {v.torch_api}: {text} ({v.reason})", file=stderr)
        if changed:
            print(f"recompat: {len(changed)} verdict(s) changed: look at them, then `recompat verify-table "
                  f"--record`", file=stderr)
            return 1
    return 0
