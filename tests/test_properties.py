"""Property tests: generated torch checkpoint call forms, translated to MindSpore, keep their invariants.

The generator builds whole files from: an import form; how the call reaches torch's checkpoint
(directly, through a module-level alias, a `self.` attribute set in __init__, or a
functools.partial); where the call stands (a module-level function, a method of an nn.Module
subclass, a nested function, a loop over `self.blocks`, an if/else) and in which statement; the
callable (a Cell attribute, `self.blocks[0]`, a local Cell, a bound method, a lambda, a closure, a
parameter, `layer.__call__`, `layer.forward`, a loop variable over cells); positional inputs (with
an optional `*splat`); a subset of keywords; a formatting (one line, extra spaces, two lines, one
argument per line with a trailing comma, comments between arguments); the indentation; LF or CRLF;
one to three call sites, sometimes nested.

The invariants are the ones users rely on: the output parses; translating it again changes nothing;
no site is lost and each is reported where its call is; every diagnostic code exists; no torch-only
keyword and no torch checkpoint reference is left; every keyword is carried over or named by a
diagnostic; the file keeps its line endings; lines outside call sites and imports are unchanged, and
so are the comments of arguments that are kept; a callable that is not a Cell never ends up in
MindSpore's reentrant recompute (it raises TypeError there).

Bugs the generators found are pinned by the `test_bugN_*` tests below. Should one come back that
cannot be fixed at once, restrict the generator with a flag named after it and mark its test a strict
xfail, so the fix turns that test red until the restriction goes.

RC_EXAMPLES=N in the environment runs N examples per property instead of the default.
"""
from __future__ import annotations

import ast
import os
import re
import textwrap
from dataclasses import dataclass, field

import pytest
from hypothesis import HealthCheck, event, given, note, settings
from hypothesis import strategies as st

from recompat import mappings
from recompat.translator.translate import translate_bytes

M = mappings.default()
CHECKPOINT = M.entry("checkpoint")
TORCH_ONLY = ("preserve_rng_state", "determinism_check", "debug")
NON_REENTRANT_SET = [p for p in CHECKPOINT.params if p.when_non_reentrant and p.when_non_reentrant["action"] == "set"]

# (import line, how the code names torch's checkpoint); "{X}" is an alias drawn per example.
IMPORTS = [
    ("import torch", "torch.utils.checkpoint.checkpoint"),
    ("import torch as th", "th.utils.checkpoint.checkpoint"),
    ("import torch.utils.checkpoint", "torch.utils.checkpoint.checkpoint"),
    ("import torch.utils.checkpoint as cp", "cp.checkpoint"),
    ("import torch.utils.checkpoint as checkpoint", "checkpoint.checkpoint"),
    ("from torch.utils import checkpoint", "checkpoint.checkpoint"),
    ("from torch.utils.checkpoint import checkpoint", "checkpoint"),
    ("from torch.utils.checkpoint import checkpoint as {X}", "{X}"),
]
ALIASES = ["ckpt", "grad_ckpt", "cpt"]
HOLDER = "ckpt_fn"          # the name or attribute a holder stores torch's checkpoint in

# Callable kinds: the text passed as the function, and what it is.
CELL, NOT_CELL, UNKNOWN = "cell", "not a cell", "unknown"
CALLABLES = {
    "attr": ("self.block", CELL),                   # assigned Block() in __init__
    "attr_forward": ("self.block.forward", CELL),
    "item": ("self.blocks[0]", CELL),               # an nn.ModuleList
    "item_forward": ("self.blocks[0].forward", CELL),
    "paren_dunder_call": ("(layer).__call__", CELL),
    "local_cell": ("local", CELL),                  # local = Block() in the function
    "loopvar": ("blk", CELL),                       # for blk in self.blocks
    "dunder_call": ("layer.__call__", CELL),
    "forward": ("layer.forward", CELL),
    "bound": ("self._inner", NOT_CELL),             # a method of the class
    "lambda": ("lambda *a, **k: a[0]", NOT_CELL),
    "closure": ("closure", NOT_CELL),               # a local def
    "param": ("fn", UNKNOWN),                       # a parameter: anything
}
NEEDS_SELF = {"attr", "attr_forward", "item", "item_forward", "bound"}
NEEDS_LOOP = {"loopvar"}
KEYWORD_VALUES = {
    "use_reentrant": ["True", "False", "None", "flag"],
    "preserve_rng_state": ["True", "False"],
    "determinism_check": ['"default"', '"none"'],
    "debug": ["True", "False"],
    "early_stop": ["True", "False"],
    "context_fn": ["ctx"],
    "mask": ["m", "(m  # the mask\n)"],            # the block's own keyword argument
}
FORMATS = ["one_line", "spaces", "continuation", "wrapped", "per_line", "comments"]
STATEMENTS = {                                      # how the call's value is used
    "assign": "out = {}",
    "return": "return {}",
    "expr": "{}",
    "augassign": "out += {}",
    "annassign": "out: object = {}",
    "subscript": "out = {}[0]",
    "argument": "out = tuple([{}, x])",
    "ifexp": "out = {} if flag else x",
    "walrus": "out = (held := {}) or held",
    "listcomp": "out = [{} for _ in range(2)][0]",
}
PARAMS = "fn, layer, x, y, z, m, flag, ctx, kw, *rest"

@dataclass
class Call:
    callable: str                     # a key of CALLABLES
    inputs: list                      # names, "*rest", or a nested Call
    keywords: list                    # [(name, value text)]; name None for **kw
    fmt: str = "one_line"
    statement: str | None = "assign"
    spaces: list = field(default_factory=list)    # per-argument (before, after) padding for "spaces"
    comments: list = field(default_factory=list)  # per-argument (comment above, trailing comment) for "comments"
    lambda_body: "Call | None" = None  # the callable is `lambda *a: <inner call>`
    late_splat: bool = False          # `*rest` after the keywords

    def calls(self):
        """This call and the ones nested in it, in source order (outer first)."""
        yield self
        if self.lambda_body is not None:
            yield from self.lambda_body.calls()
        for i in self.inputs:
            if isinstance(i, Call):
                yield from i.calls()

    @property
    def kind(self) -> str:
        return NOT_CELL if self.lambda_body is not None else CALLABLES[self.callable][1]

    def keyword(self, name: str) -> str | None:
        return next((v for k, v in self.keywords if k == name), None)


class Example:
    def __init__(self, source, newline, calls, via, fixed, style):
        self.source, self.newline, self.calls = source, newline, calls
        self.via = via                # direct | alias | attr | partial
        self.fixed = fixed            # partial: the use_reentrant it fixes ("True" / "False")
        self.style = style

    def __repr__(self):               # hypothesis prints this for a failing example
        return (f"Example(style={self.style!r}, newline={self.newline!r}, via={self.via!r}):\n"
                + self.source.replace("\r", "\u240d"))


# -- rendering ---------------------------------------------------------------------------------

def _roles(call: Call, name: str) -> list[tuple[str, object]]:
    """The call's arguments in source order: (text, role); role is "callable", ("input", i) or ("keyword", name)."""
    if call.lambda_body is not None:
        first = f"lambda *a: {_render_inline(call.lambda_body, name)}"
    else:
        first = CALLABLES[call.callable][0]
    args: list = [(first, "callable")]
    inputs = [(_render_inline(i, name) if isinstance(i, Call) else i, ("input", n)) for n, i in enumerate(call.inputs)]
    late = [a for a in inputs if a[0] == "*rest"] if call.late_splat else []
    args += [a for a in inputs if a not in late]
    keywords = [(f"{k}={v}", ("keyword", k)) for k, v in call.keywords if k is not None]
    args += keywords + late          # `f(x, k=1, *rest)` is Python; `f(**kw, *rest)` is not
    args += [(f"**{v}", ("keyword", None)) for k, v in call.keywords if k is None]
    return args


def _args(call: Call, name: str) -> list[str]:
    return [text for text, _ in _roles(call, name)]


def _render_inline(call: Call, name: str) -> str:
    return f"{name}({', '.join(_args(call, name))})"


def render_call(call: Call, name: str, indent: str, unit: str) -> str:
    """The call's text; its first line follows the statement's start, the others are at `indent`."""
    args = _args(call, name)
    if call.fmt == "one_line":
        return f"{name}({', '.join(args)})"
    if call.fmt == "spaces":
        parts = []
        for a, (before, after) in zip(args, call.spaces):
            if re.fullmatch(r"\w+=[^=]+", a) and "(" not in a:
                k, v = a.split("=", 1)
                a = f"{k}{' ' * after}={' ' * before}{v}"
            parts.append(" " * before + a + " " * after)
        return f"{name} ({','.join(parts)})"
    if call.fmt == "continuation":   # a backslash and a continuation line
        return f"{name}({args[0]}, \\\n{indent}{unit}{', '.join(args[1:])})" if args[1:] else f"{name}({args[0]})"
    if call.fmt == "wrapped":        # two lines, no trailing comma, a hanging indent
        half = max(1, len(args) // 2)
        rest = f",\n{indent}{unit}{unit}{', '.join(args[half:])})" if args[half:] else ")"
        return f"{name}({', '.join(args[:half])}" + rest
    inner = indent + unit
    lines = [f"{name}("]
    for i, a in enumerate(args):
        above, trailing = call.comments[i] if call.fmt == "comments" else (False, False)
        if above:
            lines.append(f"{inner}# über argument {i}")
        lines.append(f"{inner}{a},{f'  # trailing {i}' if trailing else ''}")
    lines.append(f"{indent})")
    return "\n".join(lines)


# -- strategies --------------------------------------------------------------------------------

@st.composite
def calls(draw, kinds: list[str], via: str, fixed: str, depth: int = 0) -> Call:
    kind = draw(st.sampled_from(kinds))
    inputs: list = draw(st.lists(st.sampled_from(["x", "y", "z"]), min_size=1, max_size=3))
    splat = draw(st.booleans())
    if splat:
        inputs.append("*rest")
    names = sorted(KEYWORD_VALUES)
    keys = draw(st.lists(st.sampled_from(names), unique=True, max_size=len(names)))
    keywords = [(k, draw(st.sampled_from(KEYWORD_VALUES[k]))) for k in keys]
    if draw(st.integers(0, 5)) == 0:
        keywords.append((None, "kw"))
    call = Call(kind, inputs, keywords, late_splat=splat and draw(st.booleans()))
    if depth == 0 and draw(st.integers(0, 3)) == 0:   # sometimes nested: in an input or a lambda
        inner = draw(calls(kinds, via, fixed, depth + 1))
        if draw(st.booleans()):
            call.inputs[0] = inner
        else:
            call.callable, call.lambda_body = "lambda", inner
    if depth == 0:
        call.fmt = draw(st.sampled_from(FORMATS))
        call.statement = draw(st.sampled_from(sorted(STATEMENTS)))
    else:
        call.fmt, call.statement = "inline", None   # a nested call is written on one line, in its outer call
    roles = _roles(call, "f")
    call.spaces = [(draw(st.integers(0, 2)), draw(st.integers(0, 2))) for _ in roles]
    call.comments = [(draw(st.booleans()), draw(st.booleans())) for _ in roles]
    return call


@st.composite
def examples(draw, styles=("function",)) -> Example:
    imp, name = draw(st.sampled_from(IMPORTS))
    alias = draw(st.sampled_from(ALIASES))
    imp, name = imp.replace("{X}", alias), name.replace("{X}", alias)
    in_class = draw(st.booleans())
    style = draw(st.sampled_from(styles))
    via = draw(st.sampled_from(["direct", "direct", "alias", "partial"] + (["attr"] if in_class else [])))
    fixed = draw(st.sampled_from(["True", "False"]))
    wrapper = draw(st.sampled_from(["plain", "nested", "if_else"] + (["loop"] if in_class else [])))
    kinds = [k for k in CALLABLES if (in_class or k not in NEEDS_SELF) and (wrapper == "loop" or k not in NEEDS_LOOP)]
    if in_class:   # as likely to meet a Cell attribute or a bound method as any other kind
        kinds += [k for k in kinds if k in NEEDS_SELF | NEEDS_LOOP]
    if wrapper == "loop":
        kinds += ["loopvar"] * 3
    sites = draw(st.lists(calls(kinds, via, fixed), min_size=1, max_size=3))
    newline = draw(st.sampled_from(["\n", "\r\n"]))
    unit = draw(st.sampled_from(["    ", "  ", "\t"]))

    def ind(n: int) -> str:
        return unit * n

    header = draw(st.sampled_from([[], ['"""A model."""'], ["# -*- coding: utf-8 -*-", "# Größe"],
                                   ["from __future__ import annotations"]]))
    extra = ["import os"] if draw(st.booleans()) else []
    if via == "partial":
        extra.append(draw(st.sampled_from(["import functools", "from functools import partial"])))
    imports = draw(st.permutations([imp, "import torch.nn as nn", *extra]))
    partial = "functools.partial" if "import functools" in imports else "partial"
    lines = [*header, *imports, "", ""]
    holder_value = {"alias": name, "attr": name, "partial": f"{partial}({name}, use_reentrant={fixed})"}.get(via)
    if via in ("alias", "partial"):
        lines += [f"{HOLDER} = {holder_value}", "", ""]
    lines += ["class Block(nn.Module):",
              f"{ind(1)}def forward(self, x, *rest, mask=None, **kw):",
              f"{ind(2)}return x", "", ""]
    if in_class:
        lines += ["class Net(nn.Module):",
                  f"{ind(1)}def __init__(self):",
                  f"{ind(2)}super().__init__()",
                  f"{ind(2)}self.block = Block()  # the checkpointed block",
                  f"{ind(2)}self.blocks = nn.ModuleList([Block(), Block()])"]
        if via == "attr":
            lines += [f"{ind(2)}self.{HOLDER} = {holder_value}"]
        lines += ["",
                  f"{ind(1)}def _inner(self, x, *rest, mask=None, **kw):",
                  f"{ind(2)}return x",
                  "",
                  f"{ind(1)}def forward(self, {PARAMS}):"]
        depth = 2
    else:
        lines += [f"def run({PARAMS}):"]
        depth = 1
    if wrapper == "nested":
        lines += [f"{ind(depth)}def inner():"]
        depth += 1
    lines += [f"{ind(depth)}out = x"]
    all_calls = [c for s in sites for c in s.calls()]
    if any(c.callable == "closure" for c in all_calls):
        lines += [f"{ind(depth)}def closure(*a, **k):", f"{ind(depth + 1)}return a[0]"]
    if any(c.callable == "local_cell" for c in all_calls):
        lines += [f"{ind(depth)}local = Block()"]
    body = depth
    if wrapper == "loop":
        lines += [f"{ind(depth)}for blk in self.blocks:"]
        body += 1
    elif wrapper == "if_else":
        lines += [f"{ind(depth)}if flag:"]
        body += 1
    caller = {"direct": name, "attr": f"self.{HOLDER}"}.get(via, HOLDER)
    prefix = draw(st.sampled_from(["", 's = "é"; ']))
    for s in sites:
        lines += (ind(body) + prefix + STATEMENTS[s.statement].format(render_call(s, caller, ind(body), unit))).split("\n")
    if wrapper == "if_else":
        lines += [f"{ind(depth)}else:", f"{ind(depth + 1)}out = y  # the plain branch"]
    lines += [f"{ind(depth)}return out"]
    if wrapper == "nested":
        lines += [f"{ind(depth - 1)}return inner()"]
    source = newline.join(lines) + (newline if draw(st.booleans()) else "")
    return Example(source, newline, all_calls, via, fixed, style)


# -- reading input and output ------------------------------------------------------------------

def _is_site_call(node: ast.AST, *, output: bool) -> bool:
    """A generated checkpoint call (input) or what it became (output: mindspore.recompute or a holder)."""
    if not isinstance(node, ast.Call):
        return False
    func = ast.unparse(node.func)
    if func in (HOLDER, f"self.{HOLDER}"):
        return True
    if output:
        return func in ("mindspore.recompute", "ms.recompute")
    return func.endswith("checkpoint") or func in ALIASES


def _site_calls(tree: ast.AST, *, output: bool) -> list[ast.Call]:
    found = [n for n in ast.walk(tree) if _is_site_call(n, output=output)]
    return sorted(found, key=lambda n: (n.lineno, n.col_offset))


def _holder_assignments(tree: ast.AST) -> list[ast.Assign]:
    return [n for n in ast.walk(tree) if isinstance(n, ast.Assign)
            and ast.unparse(n.targets[0]) in (HOLDER, f"self.{HOLDER}")]


def _other_lines(text: str, tree: ast.Module, calls: list[ast.Call]) -> list[str]:
    """Lines outside every call site, holder assignment, import statement and function the translation added
    (support code, with the two blank lines it brings)."""
    added = [s for s in tree.body if isinstance(s, ast.FunctionDef)
             and "added by recompat" in (ast.get_docstring(s) or "")]
    nodes = [*calls, *_holder_assignments(tree), *added,
             *(n for n in ast.walk(tree) if isinstance(n, (ast.Import, ast.ImportFrom)))]
    skip = {line for n in nodes for line in range(n.lineno, n.end_lineno + 1)}
    skip |= {line for s in added for line in (s.lineno - 1, s.lineno - 2)}
    return [line for i, line in enumerate(text.splitlines(), 1) if i not in skip]


def _literal(node: ast.AST | None):
    if node is None:
        return None
    return node.value if isinstance(node, ast.Constant) else ast.unparse(node)


def _keywords(call: ast.Call) -> dict:
    """The call's keywords by name, those written as defaults under `**{"k": v, **mapping}` included; the key
    None stands for a `**` mapping."""
    out = {}
    for k in call.keywords:
        if k.arg is None and isinstance(k.value, ast.Dict):
            out.update({key.value if key is not None else None: v for key, v in zip(k.value.keys, k.value.values)})
        else:
            out[k.arg] = k.value
    return out


def _events(ex: Example) -> None:
    """What the examples cover (pytest --hypothesis-show-statistics)."""
    event(f"via {ex.via}")
    event(f"{len(ex.calls)} call(s)")
    for c in ex.calls:
        event(f"callable {'lambda with a nested call' if c.lambda_body else c.callable}")
        if c.statement:
            event(f"format {c.fmt}")
            event(f"statement {c.statement}")


def translate(ex: Example):
    result = translate_bytes(ex.source.encode(), "gen.py", style=ex.style)
    assert result.error is None
    assert result.changed and result.new_data is not None, "a file with checkpoint calls must change"
    return result, result.new_data.decode()


def check_common(ex: Example, result, out: str) -> tuple[ast.Module, ast.Module]:
    """The invariants every style keeps."""
    out_tree = ast.parse(out)
    again = translate_bytes(result.new_data, "gen.py", style=ex.style)
    assert not again.changed, "translating the output again changed it:\n" + again.new_data.decode()
    assert again.sites == [], "the output still holds torch checkpoint sites"

    # no site lost: one per generated call, plus one for the holder's assignment
    in_tree = ast.parse(ex.source)
    assert len(_site_calls(in_tree, output=False)) == len(ex.calls)
    holders = _holder_assignments(in_tree)
    assert len(result.sites) == len(ex.calls) + len(holders), [str(d) for s in result.sites for d in s.diagnostics]
    for site in result.sites:
        assert site.api == CHECKPOINT.torch["api"]
        assert site.status in ("converted", "partial"), [str(d) for d in site.diagnostics]
        for d in site.diagnostics:
            assert d.code in M.diagnostics, d
            assert d.status == M.diagnostics[d.code]["status"], d
            assert (d.path, d.line, d.col) == (site.path, site.line, site.col)

    # no torch-only keyword, no torch checkpoint reference (nor import) left
    assert "preserve_rng_state" not in out and "determinism_check" not in out
    assert not re.search(r"\bdebug\s*=", out)
    assert "checkpoint" not in out.replace("# the checkpointed block", "")

    # line endings all of the input's kind
    if ex.newline == "\r\n":
        assert out.count("\n") == out.count("\r\n") and "\r\r" not in out
    else:
        assert "\r" not in out
    assert out.endswith(ex.newline) == ex.source.endswith(ex.newline)
    return in_tree, out_tree


SETTINGS = settings(max_examples=int(os.environ.get("RC_EXAMPLES", 250)), deadline=None,
                    suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large])


@SETTINGS
@given(examples())
def test_generated_call_forms_keep_their_invariants(ex: Example):
    _events(ex)
    result, out = translate(ex)
    note("output:\n" + out.replace("\r", "\u240d"))
    in_tree, out_tree = check_common(ex, result, out)

    in_calls = _site_calls(in_tree, output=False)
    out_calls = _site_calls(out_tree, output=True)
    assert len(out_calls) == len(in_calls)

    # each site reported at its call (1-based column, in characters)
    by_position = {(s.line, s.col): s for s in result.sites}
    call_sites = [by_position.get((n.lineno, len(ex.source.splitlines()[n.lineno - 1].encode()[:n.col_offset]
                                                  .decode()) + 1)) for n in in_calls]
    assert None not in call_sites, (sorted(by_position), [(n.lineno, n.col_offset) for n in in_calls])

    # lines outside the call sites and imports are unchanged
    assert _other_lines(out, out_tree, out_calls) == _other_lines(ex.source, in_tree, in_calls)

    # what the holder fixes (a partial's keywords are part of every call through it)
    held = {}
    if ex.via == "partial":
        held = _keywords(next(n for n in ast.walk(_holder_assignments(out_tree)[0]) if isinstance(n, ast.Call)))
        assert ast.unparse(held["use_reentrant"]) == ex.fixed
        assert "early_stop" in held if ex.fixed == "False" else "early_stop" not in held

    for gen, site, ms in zip(ex.calls, call_sites, out_calls):
        messages = " | ".join(d.message for d in site.diagnostics)
        codes = {d.code for d in site.diagnostics}
        kws = _keywords(ms)
        effective = {**held, **kws}

        # nothing dropped silently: each keyword is in the output (renamed maybe) or named by a diagnostic
        for name, value in gen.keywords:
            if name is None:
                assert None in kws, "**kw lost"
                continue
            param = CHECKPOINT.param(name)
            renamed = param.mindspore if param is not None else name
            assert name in kws or renamed in kws or name in messages, f"{name}={value} dropped silently"
        # a keyword the call did not have is never written beside a ** mapping, which may hold it
        if any(name is None for name, _ in gen.keywords):
            written = {(CHECKPOINT.param(n).mindspore if CHECKPOINT.param(n) else n) for n, _ in gen.keywords if n}
            added = {k.arg for k in ms.keywords if k.arg} - written
            assert not added, f"{sorted(added)} written beside a ** mapping that may hold them"
        # the block's inputs are kept, in order
        assert len(ms.args) == 1 + len(gen.inputs)
        for a, i in zip(ms.args[1:], gen.inputs):
            if isinstance(i, str):
                assert ast.unparse(a) == i
        # comments of kept arguments stay (a trailing one on its argument's line)
        if gen.fmt == "comments":
            out_lines = out.splitlines()
            for i, ((text, role), (above, trailing)) in enumerate(zip(_roles(gen, "f"), gen.comments)):
                if role[0] == "keyword" and role[1] in TORCH_ONLY:
                    continue
                if trailing:
                    assert any(line.rstrip().endswith(f"# trailing {i}") for line in out_lines), f"# trailing {i} lost"
                if above:
                    assert f"# über argument {i}" in out, f"# über argument {i} lost"
        if gen.keyword("mask") and "# the mask" in gen.keyword("mask"):
            assert ast.unparse(kws["mask"]) == "m" and "# the mask" in out

        # use_reentrant: torch's meaning kept for Cells; never reentrant for a non-Cell
        given_value = gen.keyword("use_reentrant") or (ex.fixed if ex.via == "partial" else "None")
        reentrant = _literal(effective.get("use_reentrant", ast.Constant(True)))
        if gen.kind == CELL:
            assert reentrant == {"True": True, "None": True, "False": False}.get(given_value, given_value)
        elif given_value == "flag" and gen.kind == UNKNOWN:
            # where the callable may be a Cell: decided at run time, a partial diagnostic
            assert "RC103" in codes and site.status == "partial"
        else:
            assert reentrant is False, f"{gen.kind} callable in MindSpore's reentrant recompute"
            assert given_value == "False" or "RC101" in codes

        # the settings the mappings fix for the non-reentrant form (and, decided at run time, what suits both)
        if reentrant == "flag":
            assert ast.unparse(effective["early_stop"]) == CHECKPOINT.param("early_stop").when_dynamic["value"]
        if reentrant is False:
            for p in NON_REENTRANT_SET:
                assert ast.unparse(effective[p.mindspore]) == p.when_non_reentrant["value"], p.mindspore
        rng = gen.keyword("preserve_rng_state")
        if rng is not None and reentrant is False:
            assert ast.unparse(kws["save_rng_state"]) == rng
        if rng is not None and reentrant is True:
            assert "save_rng_state" not in kws and "RC111" in codes


@SETTINGS
@given(examples(styles=("cell",)))
def test_cell_style_keeps_the_invariants(ex: Example):
    """--style cell: a Cell attribute only called under checkpoint is marked once in __init__."""
    _events(ex)
    result, out = translate(ex)
    note("output:\n" + out.replace("\r", "\u240d"))
    in_tree, out_tree = check_common(ex, result, out)
    codes = [d.code for s in result.sites for d in s.diagnostics]
    marks = [n for n in ast.walk(out_tree) if isinstance(n, ast.Call) and ast.unparse(n.func).endswith(".recompute")
             and not ast.unparse(n.func).startswith(("mindspore.", "ms."))]
    assert len(marks) == (1 if "RC140" in codes else 0)
    if marks:
        assert ast.unparse(marks[0].func) == "self.block.recompute"
        init = next(n for n in ast.walk(out_tree) if isinstance(n, ast.FunctionDef) and n.name == "__init__")
        assert any(m is n for m in marks for n in ast.walk(init)), "the mark is not in __init__"
    # nothing dropped silently: each keyword is somewhere in the output or named by a diagnostic
    messages = " | ".join(d.message for s in result.sites for d in s.diagnostics)
    out_keywords = {k.arg for n in ast.walk(out_tree) if isinstance(n, ast.Call) for k in n.keywords}
    for gen in ex.calls:
        for name, value in gen.keywords:
            param = CHECKPOINT.param(name) if name else None
            renamed = param.mindspore if param is not None else name
            assert name in out_keywords or renamed in out_keywords or (name and name in messages), (
                f"{name}={value} dropped silently")


# -- edge cases found while writing the generators ---------------------------------------------

def _translate(code: str, style: str = "function"):
    data = textwrap.dedent(code).encode()
    result = translate_bytes(data, "edge.py", style=style)
    out = result.new_data.decode() if result.changed else data.decode()
    ast.parse(out)
    assert not translate_bytes(out.encode(), "edge.py", style=style).changed
    return result, out


def test_a_starred_callable_is_left_with_a_comment_and_stays_stable():
    result, out = _translate("""
        from torch.utils.checkpoint import checkpoint


        def f(args):
            return checkpoint(*args)
    """)
    assert [(s.api, s.status) for s in result.sites] == [("torch.utils.checkpoint.checkpoint", "manual")] * 2
    assert "    # recompat: RC190 torch.utils.checkpoint.checkpoint left as it is" in out
    assert ("# recompat: RC161 torch names still imported: torch.utils.checkpoint.checkpoint\n"
            "from torch.utils.checkpoint import checkpoint") in out   # still used: kept, and reported


def test_a_file_without_a_trailing_newline_and_crlf():
    _, out = _translate("from torch.utils.checkpoint import checkpoint\r\ndef f(g, x):\r\n\treturn checkpoint(g, x)")
    assert out == "import mindspore\r\ndef f(g, x):\r\n\treturn mindspore.recompute(g, x, use_reentrant=False, early_stop=False)"


def test_a_torch_name_still_used_keeps_its_import():
    result, out = _translate("""
        from torch.utils.checkpoint import checkpoint, detach_variable


        def f(g, x):
            return checkpoint(g, *detach_variable((x,)), use_reentrant=False)
    """)
    assert out.startswith("\n# recompat: RC161 torch names still imported: torch.utils.checkpoint.detach_variable\n"
                          "from torch.utils.checkpoint import detach_variable\nimport mindspore\n")
    assert [d.code for s in result.sites for d in s.diagnostics if d.code.startswith("RC1")] == [
        "RC117", "RC100", "RC160", "RC161"]   # the torch helper still used is reported where it is


def test_an_import_sharing_its_statement_keeps_the_other_names():
    _, out = _translate("""
        import os, torch.utils.checkpoint as cp


        def f(g, x):
            return cp.checkpoint(g, x, use_reentrant=False)
    """)
    assert "\nimport os\n" in out and "cp" not in out.replace("recompute", "")


def test_a_module_level_alias_is_a_holder():
    result, out = _translate("""
        import torch.utils.checkpoint
        ckpt = torch.utils.checkpoint.checkpoint


        def f(g, x):
            return ckpt(g, x, preserve_rng_state=False, debug=True)
    """)
    assert "ckpt = mindspore.recompute\n" in out
    assert "return ckpt(g, x, save_rng_state=False, use_reentrant=False, early_stop=False)" in out
    assert len(result.sites) == 2


# -- translator bugs the generators found (BUG-n; fixed: these keep them fixed) --

def test_bug1_known_non_cell_with_a_runtime_flag():
    _, out = _translate("""
        from torch.utils.checkpoint import checkpoint


        def f(x, flag):
            return checkpoint(lambda t: t * 2, x, use_reentrant=flag)
    """)
    # MindSpore's reentrant recompute raises TypeError for a lambda whatever flag is: pass False
    assert "mindspore.recompute(lambda t: t * 2, x, use_reentrant=False" in out


def test_bug2_dropping_an_argument_keeps_the_comments_of_the_others():
    _, out = _translate("""
        from torch.utils.checkpoint import checkpoint


        def f(g, x):
            return checkpoint(
                g,
                x,  # the input
                debug=True,  # trace off
                use_reentrant=False,
            )
    """)
    assert "        x,  # the input\n" in out


def test_bug3_early_stop_through_a_non_reentrant_partial():
    result, out = _translate("""
        import functools
        from torch.utils.checkpoint import checkpoint

        ckpt = functools.partial(checkpoint, use_reentrant=False)


        def f(g, x):
            return ckpt(g, x, early_stop=True)
    """)
    assert "ckpt = recompute_partial(mindspore.recompute, use_reentrant=False, early_stop=False)" in out
    # the call's own early_stop=True overrides the partial's False: MindSpore 2.10 crashes (RC117)
    assert "return ckpt(g, x, early_stop=False)" in out


def test_bug4_reentrant_call_through_a_non_reentrant_partial():
    result, out = _translate("""
        import functools
        from torch.utils.checkpoint import checkpoint

        ckpt = functools.partial(checkpoint, use_reentrant=False)


        class Net(nn.Module):
            def __init__(self):
                super().__init__()
                self.block = Block()

            def forward(self, x):
                return ckpt(self.block, x, use_reentrant=True, preserve_rng_state=False)
    """)
    # the call is reentrant: MindSpore's reentrant backward breaks when save_rng_state is passed (RC111)
    assert "save_rng_state" not in out
    assert "RC111" in [d.code for s in result.sites for d in s.diagnostics]


def test_bug5_cell_style_records_every_keyword():
    result, out = _translate("""
        from torch.utils.checkpoint import checkpoint


        class Net(nn.Module):
            def __init__(self):
                super().__init__()
                self.block = Block()

            def forward(self, x):
                return checkpoint(self.block, x, use_reentrant=True, preserve_rng_state=True, early_stop=False)
    """, style="cell")
    assert "self.block.recompute()" in out and "return self.block(x)" in out
    messages = " ".join(d.message for s in result.sites for d in s.diagnostics)
    for name in ("use_reentrant", "preserve_rng_state", "early_stop"):
        assert name in messages, name


def test_bug6_an_import_with_a_fallback_is_not_lost_silently():
    result, _ = _translate("""
        try:
            from torch.utils.checkpoint import checkpoint
        except ImportError:
            checkpoint = None


        def f(g, x):
            return checkpoint(g, x, use_reentrant=False)
    """)
    # translated, or at least reported (RC191 exists for a name bound to torch's and to something else)
    assert result.sites and (result.changed or "RC191" in [d.code for s in result.sites for d in s.diagnostics])


def test_bug7_runtime_reentrancy_records_the_early_stop_decision():
    result, out = _translate("""
        from torch.utils.checkpoint import checkpoint


        def f(block, x, flag):
            return checkpoint(block, x, use_reentrant=flag)
    """)
    # when flag is False, MindSpore's non-reentrant form runs with early_stop=True (the RC117 crash)
    assert "RC118" in [d.code for s in result.sites for d in s.diagnostics]


def test_bug9_a_parenthesized_module_before_dunder_call():
    _, out = _translate("""
        from torch.utils.checkpoint import checkpoint


        def f(layer, x):
            return checkpoint((layer).__call__, x)
    """)
    assert "return mindspore.recompute((layer), x)" in out


@pytest.mark.parametrize("style, code", [
    ("cell", "from torch.utils.checkpoint import checkpoint\r\n"
             "class N(nn.Module):\r\n"
             "    def __init__(self):\r\n"
             "        super().__init__()\r\n"
             "        self.block = Block()\r\n"
             "    def forward(self, x, y):\r\n"
             "        return checkpoint(self.block, torch.cat([x,\r\n"
             "                                                 y]))\r\n"),
    ("function", "from torch.distributed.algorithms._checkpoint.checkpoint_wrapper import checkpoint_wrapper\r\n"
                 "class N(nn.Module):\r\n"
                 "    def __init__(self):\r\n"
                 "        super().__init__()\r\n"
                 "        self.block = checkpoint_wrapper(Block(1,\r\n"
                 "                                              2))\r\n"),
])
def test_bug10_crlf_inside_a_rebuilt_argument(style, code):
    out = translate_bytes(code.encode(), "crlf.py", style=style).new_data
    assert b"\r\r" not in out


def test_bug8_a_site_inside_a_dropped_argument():
    result, out = _translate("""
        from torch.utils.checkpoint import checkpoint


        def f(g, x):
            return checkpoint(g, x, use_reentrant=False, determinism_check=checkpoint(g, x))
    """)
    assert len(result.sites) == 2
