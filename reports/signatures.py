"""Signatures as mappings/ records them, and their drift from the installed frameworks.

A recorded signature is the text of a call head, e.g.
``checkpoint(function, *args, use_reentrant=None, context_fn=noop_context_fn, **kwargs)`` or
``Cell.recompute(*, use_reentrant=True, **kwargs)``. :func:`parse` reads it with :mod:`ast` (no framework
imported); :func:`drift` compares it with :func:`inspect.signature` of the installed API and names every
difference: a parameter missing or extra, another kind (positional, keyword-only, ``*args``), another default.
"""
from __future__ import annotations

import ast
import enum
import importlib
import inspect
from dataclasses import dataclass

POSITIONAL_ONLY, POSITIONAL, VAR_POSITIONAL, KEYWORD_ONLY, VAR_KEYWORD = (
    "positional-only", "positional or keyword", "*args", "keyword-only", "**kwargs")
_KINDS = {
    inspect.Parameter.POSITIONAL_ONLY: POSITIONAL_ONLY,
    inspect.Parameter.POSITIONAL_OR_KEYWORD: POSITIONAL,
    inspect.Parameter.VAR_POSITIONAL: VAR_POSITIONAL,
    inspect.Parameter.KEYWORD_ONLY: KEYWORD_ONLY,
    inspect.Parameter.VAR_KEYWORD: VAR_KEYWORD,
}


class SignatureError(ValueError):
    """A recorded signature that is not a call head Python can read."""


@dataclass(frozen=True)
class Parameter:
    name: str              # as mappings/ names it: "*args" and "**kwargs" keep their stars
    kind: str              # one of the kind strings above
    default: str | None    # the default's source text; None: no default

    @property
    def bare(self) -> str:
        return self.name.lstrip("*")


def parse(signature: str) -> tuple[Parameter, ...]:
    """The parameters of a recorded signature, in order."""
    from recompat.mappings import signature_arguments   # the one reader of the format

    args = signature_arguments(signature)
    if args is None:
        raise SignatureError(f"not a signature: {signature!r} (neither a call head nor an attribute's name)")
    out: list[Parameter] = []
    positional = [*args.posonlyargs, *args.args]
    defaults = [None] * (len(positional) - len(args.defaults)) + list(args.defaults)
    for i, (a, d) in enumerate(zip(positional, defaults)):
        kind = POSITIONAL_ONLY if i < len(args.posonlyargs) else POSITIONAL
        out.append(Parameter(a.arg, kind, None if d is None else ast.unparse(d)))
    if args.vararg:
        out.append(Parameter("*" + args.vararg.arg, VAR_POSITIONAL, None))
    for a, d in zip(args.kwonlyargs, args.kw_defaults):
        out.append(Parameter(a.arg, KEYWORD_ONLY, None if d is None else ast.unparse(d)))
    if args.kwarg:
        out.append(Parameter("**" + args.kwarg.arg, VAR_KEYWORD, None))
    return tuple(out)


def names(signature: str) -> tuple[str, ...]:
    return tuple(p.name for p in parse(signature))


def resolve(api: str):
    """The object a qualified name denotes: the longest importable module prefix, then attributes."""
    parts = api.split(".")
    for cut in range(len(parts), 0, -1):
        try:
            obj = importlib.import_module(".".join(parts[:cut]))
        except ImportError:
            continue
        for attr in parts[cut:]:
            obj = getattr(obj, attr)
        return obj
    raise ImportError(f"{api}: no module of this name can be imported")


def installed(obj) -> tuple[Parameter, ...]:
    """The parameters of an installed callable, as :func:`parse` gives a recorded one (``self`` left out).
    A builtin (torch.cat, Tensor methods) has no inspect signature: its docstring's first signature line stands
    in; SignatureError when there is neither."""
    return overloads(obj)[0]


def overloads(obj) -> list[tuple[Parameter, ...]]:
    """Every signature of an installed callable: inspect's, or for a builtin each signature line of its
    docstring (torch.sum documents two). SignatureError when there is none."""
    try:
        sig = inspect.signature(obj)
    except (ValueError, TypeError):
        name = getattr(obj, "__name__", "")
        found = []
        for line in (getattr(obj, "__doc__", None) or "").splitlines():
            line = line.strip().removeprefix(".. function::").strip()
            if name and line.startswith(name + "(") and ")" in line:
                try:
                    found.append(tuple(p for p in parse(line[:line.rindex(")") + 1]) if p.name != "self"))
                except SignatureError:
                    continue
        if not found:
            raise SignatureError(f"{obj!r} has no inspect signature and no signature line in its docstring") from None
        return found
    if inspect.isclass(obj) and issubclass(obj, enum.Enum) and len(obj):
        # an enum with members is called with one value (a member lookup); the rest of inspect's signature is
        # the functional API for new enums, which a class with members refuses
        return [(Parameter("value", _KINDS[inspect.Parameter.POSITIONAL_OR_KEYWORD], None),)]
    if inspect.isclass(obj) and [p.kind for p in sig.parameters.values()] == [
            inspect.Parameter.VAR_POSITIONAL, inspect.Parameter.VAR_KEYWORD] and "__init__" in vars(obj):
        sig = inspect.signature(obj.__init__)   # a metaclass's __call__ hides it (MindSpore's Cell)
    out: list[Parameter] = []
    for p in sig.parameters.values():
        if p.name == "self" and not out:
            continue
        stars = {inspect.Parameter.VAR_POSITIONAL: "*", inspect.Parameter.VAR_KEYWORD: "**"}.get(p.kind, "")
        default = None if p.default is inspect.Parameter.empty else p.default
        out.append(Parameter(stars + p.name, _KINDS[p.kind],
                             None if p.default is inspect.Parameter.empty else _default_text(default)))
    return [tuple(out)]


def _default_text(value) -> str:
    if isinstance(value, enum.Enum):
        return f"{type(value).__name__}.{value.name}"
    if inspect.isfunction(value) or inspect.isclass(value) or inspect.isbuiltin(value):
        return "lambda" if value.__name__ == "<lambda>" else value.__name__
    if inspect.ismodule(value):      # its name, not its repr (which holds where this machine installed it)
        return value.__name__
    return repr(value)


def _same_default(recorded: str | None, actual: str | None) -> bool:
    if recorded is None or actual is None:
        return recorded == actual
    if recorded.startswith("lambda"):
        return actual == "lambda"
    if recorded == actual:
        return True
    try:   # 'default' and "default", 1e-05 and 0.00001: compare values where the text is a literal
        return ast.literal_eval(recorded) == ast.literal_eval(actual)
    except (ValueError, SyntaxError):
        return False


def drift(recorded: str, actual: tuple[Parameter, ...]) -> list[str]:
    """Every difference between a recorded signature and installed parameters, in words; [] when they agree."""
    rec = parse(recorded)
    problems = []
    rec_by, act_by = {p.bare: p for p in rec}, {p.bare: p for p in actual}
    for p in rec:
        if p.bare not in act_by:
            problems.append(f"{p.name} is recorded but the installed signature has no such parameter")
    for p in actual:
        if p.bare not in rec_by:
            problems.append(f"{p.name} (default {p.default}) is in the installed signature but not recorded"
                            if p.default is not None else
                            f"{p.name} is in the installed signature but not recorded")
    for p in rec:
        q = act_by.get(p.bare)
        if q is None:
            continue
        if p.kind != q.kind:
            problems.append(f"{p.name}: recorded as {p.kind}, installed as {q.kind}")
        if not _same_default(p.default, q.default):
            problems.append(f"{p.name}: recorded default {p.default}, installed default {q.default}")
    common = [p.bare for p in rec if p.bare in act_by]
    if common != [p.bare for p in actual if p.bare in rec_by]:
        problems.append(f"parameter order differs: recorded {', '.join(common)}; installed "
                        f"{', '.join(p.bare for p in actual if p.bare in rec_by)}")
    return problems


def pretty(api: str, signature: str, width: int = 88) -> str:
    """``api(params)`` on one line, or one parameter a line when that is longer than ``width``."""
    params = parse(signature)
    parts = []
    star_done = any(p.kind == VAR_POSITIONAL for p in params)
    for i, p in enumerate(params):
        if p.kind == KEYWORD_ONLY and not star_done:
            parts.append("*")
            star_done = True
        parts.append(p.name if p.default is None else f"{p.name}={p.default}")
        if p.kind == POSITIONAL_ONLY and (i + 1 == len(params) or params[i + 1].kind != POSITIONAL_ONLY):
            parts.append("/")
    line = f"{api}({', '.join(parts)})"
    if len(line) <= width:
        return line
    return f"{api}(\n" + ",\n".join(f"    {p}" for p in parts) + "\n)"
