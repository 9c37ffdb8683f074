"""The training step, MindSpore -> torch (translate --scope model --to torch).

MindSpore differentiates a function and hands the gradients to the optimizer; torch runs the function and calls
backward() on its loss, which fills each parameter's `.grad` for `optimizer.step()`:

    grad_fn = mindspore.value_and_grad(forward_fn, None, optimizer.parameters, has_aux=True)
    ...                                                             ...
    (loss, _), grads = grad_fn(x, y)                    optimizer.zero_grad()
    grads = ops.clip_by_norm(grads, 1.0)          ->    (loss, _) = forward_fn(x, y)
    optimizer(grads)                                    loss.backward()
                                                        torch.nn.utils.clip_grad_norm_(<the weights>, 1.0)
                                                        optimizer.step()

The definition of `grad_fn` goes. `find` takes each `G = value_and_grad(F, None, W[, has_aux=...])` (the names
in training.yaml's `loop`, framework mindspore, kind function) whose every use is a statement `value, grads =
G(...)`, followed in its block by what torch's loop has a statement for: a clip of the gradients by an entry of
rule grad_clip (`grads = ops.clip_by_norm(grads, ...)`), then the optimizer called with them, alone or inside
the ordering function (`loss = ops.depend(loss, optimizer(grads))`). A call whose gradients the rest of its block
never reads (an evaluation through the step's function) becomes the function's call alone. Gradients with respect to inputs
(grad_position other than None), the gradients read anything else (summed by hand for accumulation, logged,
scaled), a function of several outputs differentiated without has_aux (MindSpore differentiates their sum), a
use of G elsewhere: nothing of G is rewritten, and the definition says why (RC348).
"""
from __future__ import annotations

import ast
from dataclasses import dataclass, field
from typing import Callable

from recompat.mappings import Entry
from recompat.translator import names
from recompat.translator.source import Source, statement_blocks

# value_and_grad(fn, grad_position=0, weights=None, has_aux=False, return_ids=False, sens_param=False), MindSpore 2.10
_PARAMS = ("fn", "grad_position", "weights", "has_aux", "return_ids", "sens_param")


@dataclass
class GradCall:
    """`value, grads = G(args)` and what its block does with the gradients."""
    statement: ast.Assign
    call: ast.Call
    value: ast.expr                 # the value's target: `(loss, _)`
    loss: str                       # what torch's backward() is called on, as written
    clips: list[tuple[ast.stmt, ast.Call]] = field(default_factory=list)   # grads = clip(grads, ...)
    step: ast.stmt | None = None    # the statement that calls the optimizer; None: the gradients are never read
    optimizer: ast.expr | None = None


@dataclass
class GradFunction:
    """`G = value_and_grad(F, None, W, ...)` and its calls, or why it is left as it is."""
    statement: ast.Assign
    call: ast.Call
    name: str                       # G, as written: `grad_fn`, `self.grad_fn`
    function: ast.expr | None = None
    weights: ast.expr | None = None
    has_aux: bool = False
    calls: list[GradCall] = field(default_factory=list)
    refused: str | None = None


def _arguments(call: ast.Call) -> dict[str, ast.expr] | str:
    if any(isinstance(a, ast.Starred) for a in call.args) or any(k.arg is None for k in call.keywords) \
            or len(call.args) > len(_PARAMS):
        return "its arguments are unpacked (*args, **kwargs): recompat cannot tell which is which"
    given = dict(zip(_PARAMS, call.args))
    for k in call.keywords:
        if k.arg not in _PARAMS:
            return f"it is given {k.arg}=, which MindSpore 2.10's value_and_grad does not take"
        given[k.arg] = k.value
    return given


_UNKNOWN = object()   # a value decided at run time


def _literal(node: ast.expr | None, default):
    if node is None:
        return default
    return node.value if isinstance(node, ast.Constant) else _UNKNOWN


def _definition(stmt: ast.Assign, call: ast.Call, src: Source) -> GradFunction:
    target = stmt.targets[0]
    fn = GradFunction(stmt, call, src.segment(target))
    given = _arguments(call)
    if isinstance(given, str):
        fn.refused = given
        return fn
    fn.function, fn.weights = given.get("fn"), given.get("weights")
    position = _literal(given.get("grad_position"), 0)
    if fn.function is None:
        fn.refused = "it is given no function"
    elif position is not None:
        fn.refused = ("it differentiates with respect to inputs (grad_position is not None): torch's backward() "
                      "fills the parameters' .grad; write torch.autograd.grad(loss, inputs) by hand")
    elif fn.weights is None:
        fn.refused = "it is given no weights: it differentiates with respect to nothing torch's optimizer steps"
    elif _literal(given.get("return_ids"), False) is not False:
        fn.refused = "return_ids= is not False: the gradients come as (id, gradient) pairs"
    elif _literal(given.get("sens_param"), False) is not False:
        fn.refused = "sens_param= is not False: the loss's gradient is given as an input"
    elif (has_aux := _literal(given.get("has_aux"), False)) not in (True, False):
        fn.refused = "has_aux= is decided at run time: recompat cannot tell which output is the loss"
    else:
        fn.has_aux = has_aux
    return fn


def _several_outputs(function: ast.expr, tree: ast.Module) -> bool:
    """Does the file's function of that name return a tuple display (several outputs)?"""
    if not isinstance(function, ast.Name):
        return False
    for node in ast.walk(tree):
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)) and node.name == function.id:
            for inner in ast.walk(node):
                if isinstance(inner, ast.Return) and isinstance(inner.value, ast.Tuple):
                    return True
    return False


def _loss(value: ast.expr, has_aux: bool, src: Source) -> str | None:
    if not has_aux:
        return value.id if isinstance(value, ast.Name) else None
    if isinstance(value, (ast.Tuple, ast.List)) and value.elts and isinstance(value.elts[0], ast.Name):
        return value.elts[0].id
    return f"{value.id}[0]" if isinstance(value, ast.Name) else None


def _reads(node: ast.AST, name: str) -> bool:
    return any(isinstance(n, ast.Name) and n.id == name and isinstance(n.ctx, ast.Load) for n in ast.walk(node))


def quoted(node: ast.AST, src: Source) -> str:
    """The statement or expression as a message names it: its first line, cut short (no line number, which the
    comments a translation adds would move)."""
    text = src.segment(node).splitlines()[0].strip()
    return f"`{text if len(text) <= 60 else text[:57] + '...'}`"


def _optimizer_call(stmt: ast.stmt, grads: str, is_depend) -> ast.Call | None:
    """The optimizer's call `O(grads)` that `stmt` is, or is inside the ordering function (`x = depend(x, O(grads))`)."""
    value = stmt.value if isinstance(stmt, (ast.Expr, ast.Assign)) else None
    if isinstance(stmt, ast.Assign) and isinstance(value, ast.Call) and is_depend(value.func) \
            and len(value.args) == 2 and not value.keywords:
        value = value.args[1]
    elif isinstance(stmt, ast.Assign):
        return None
    if isinstance(value, ast.Call) and len(value.args) == 1 and not value.keywords \
            and isinstance(value.args[0], ast.Name) and value.args[0].id == grads \
            and isinstance(value.func, (ast.Name, ast.Attribute)):
        return value
    return None


def _follow(use: GradCall, grads: str, after: list[ast.stmt], clip_entry, is_depend, src: Source) -> str | None:
    """Fill the clips and the step from the statements after the call in its block; why not, or None."""
    for stmt in after:
        if (call := _optimizer_call(stmt, grads, is_depend)) is not None:
            use.step, use.optimizer = stmt, call.func
            break
        value = stmt.value if isinstance(stmt, ast.Assign) else None
        if isinstance(value, ast.Call) and clip_entry(value.func) is not None and len(stmt.targets) == 1 \
                and isinstance(stmt.targets[0], ast.Name) and stmt.targets[0].id == grads \
                and value.args and isinstance(value.args[0], ast.Name) and value.args[0].id == grads:
            use.clips.append((stmt, value))
            continue
        if _reads(stmt, grads):
            return (f"the gradients are read by {quoted(stmt, src)}, which torch's loop has no statement for "
                    f"(they are .grad there)")
    else:
        return None   # the gradients are never read: the value alone (an evaluation through the step's function)
    for stmt in after[after.index(use.step) + 1:] if use.step is not None else ():
        if _reads(stmt, grads):
            return f"the gradients are read again by {quoted(stmt, src)}, after the optimizer's update"
    return None


_DEFINITIONS = (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)


def _binds(definition: ast.AST, name: str) -> bool:
    """Does a function or class bind `name` itself (an argument, an assignment in it): its own, not the one seen?"""
    args = definition.args if isinstance(definition, (ast.FunctionDef, ast.AsyncFunctionDef)) else None
    if args and name in {a.arg for a in (*args.posonlyargs, *args.args, *args.kwonlyargs, args.vararg, args.kwarg)
                         if a is not None}:
        return True
    return any(isinstance(n, ast.Name) and n.id == name and isinstance(n.ctx, ast.Store)
               for stmt in definition.body for n in ast.walk(stmt))


def _scope(stmt: ast.stmt, target: ast.expr, parents: dict[int, ast.AST]) -> ast.AST:
    """Where `target` of `stmt` is seen: a name, in the function (or module) that assigns it; `self.x`, in the class
    of the method that assigns it."""
    node = parents.get(id(stmt))
    want = ast.ClassDef if isinstance(target, ast.Attribute) else (ast.FunctionDef, ast.AsyncFunctionDef)
    while node is not None and not isinstance(node, (want, ast.Module)):
        node = parents.get(id(node))
    return node


def _uses(scope: ast.AST, src: Source, name: str) -> tuple[list[tuple[ast.Assign, list[ast.stmt]]], ast.stmt | None]:
    """The statements `value, grads = <name>(...)` in `scope` (a function or class below it that binds a name of its
    own excepted), with the rest of their block; the statement of any other read."""
    found, other = [], None
    todo = [scope.body]
    while todo:
        body = todo.pop()
        for i, stmt in enumerate(body):
            if isinstance(stmt, _DEFINITIONS) and "." not in name and _binds(stmt, name):
                continue
            if isinstance(stmt, ast.Assign) and isinstance(stmt.value, ast.Call) \
                    and src.segment(stmt.value.func) == name:
                found.append((stmt, body[i + 1:]))
                rest = [*stmt.targets, *stmt.value.args, *(k.value for k in stmt.value.keywords)]
            else:   # its own expressions: the statements it holds are walked as blocks
                rest = [c for c in ast.iter_child_nodes(stmt)
                        if not isinstance(c, (ast.stmt, ast.excepthandler, ast.match_case))]
            for part in rest:
                for n in ast.walk(part):
                    if isinstance(n, (ast.Name, ast.Attribute)) and isinstance(n.ctx, ast.Load) \
                            and src.segment(n) == name and other is None:
                        other = stmt
            todo.extend(statement_blocks(stmt))
    return sorted(found, key=lambda use: use[0].lineno), other


def _one_line(stmt: ast.stmt, src: Source) -> bool:
    """Does `stmt` stand alone on its lines (nothing else before or after it there, but a comment)?"""
    before = src.text[src.line_start(stmt.lineno):src.start(stmt)]
    after = src.text[src.end(stmt):src.line_end(stmt.end_lineno)].strip()
    return not before.strip() and (not after or after.startswith("#"))


def find(tree: ast.Module, src: Source, qualname: Callable[[ast.expr], str | None], differentiators: set[str],
         depends: set[str], clip_entry: Callable[[ast.expr], Entry | None]) -> list[GradFunction]:
    """Each `G = value_and_grad(...)` of the file (`qualname`: an expression's qualified name by the module's
    imports; `differentiators`, `depends`: the names that differentiate and order; `clip_entry`: the grad_clip
    entry a function called is), with its calls or why it has none."""
    def is_depend(node):
        return qualname(node) in depends

    parents = {id(child): node for node in ast.walk(tree) for child in ast.iter_child_nodes(node)}
    found, scopes = [], {}
    for stmt in ast.walk(tree):
        if not (isinstance(stmt, ast.Assign) and len(stmt.targets) == 1 and isinstance(stmt.value, ast.Call)
                and qualname(stmt.value.func) in differentiators):
            continue
        target = stmt.targets[0]
        if not (isinstance(target, ast.Name) or (isinstance(target, ast.Attribute) and names.attribute_chain(target))):
            continue
        fn = _definition(stmt, stmt.value, src)
        found.append(fn)
        scopes[id(fn)] = _scope(stmt, target, parents)
    for fn in found:
        twice = [other for other in found if other.name == fn.name and scopes[id(other)] is scopes[id(fn)]]
        if len(twice) > 1 and not fn.refused:
            fn.refused = f"{fn.name} is assigned {len(twice)} times where it is seen: recompat cannot tell which is called"
        if not fn.refused:
            _calls(fn, scopes[id(fn)], tree, src, clip_entry, is_depend)
    return found


def _calls(fn: GradFunction, scope: ast.AST, tree: ast.Module, src: Source, clip_entry, is_depend) -> None:
    """Fill the calls of `fn`, whose name is seen in `scope`, or say why it has none (fn.refused)."""
    has_aux = fn.has_aux
    if not has_aux and _several_outputs(fn.function, tree):
        fn.refused = (f"{src.segment(fn.function)} returns several values and has_aux is not True: MindSpore "
                      f"differentiates their sum, torch's backward() one loss")
        return
    if not _one_line(fn.statement, src):
        fn.refused = "its statement shares a line with another"
        return
    uses, other = _uses(scope, src, fn.name)
    if other is not None:
        fn.refused = f"{fn.name} is used by {quoted(other, src)} other than as `value, grads = {fn.name}(...)`"
        return
    for assign, after in uses:
        fn.refused = _grad_call(fn, assign, after, has_aux, src, clip_entry, is_depend)
        if fn.refused:
            fn.calls = []
            return
    if not fn.calls:
        fn.refused = f"{fn.name} is never called where it is seen"


def _grad_call(fn: GradFunction, assign: ast.Assign, after: list[ast.stmt], has_aux: bool, src: Source,
               clip_entry, is_depend) -> str | None:
    where = quoted(assign, src)
    target = assign.targets[0] if len(assign.targets) == 1 else None
    if not (isinstance(target, (ast.Tuple, ast.List)) and len(target.elts) == 2
            and isinstance(target.elts[1], ast.Name)):
        return f"its call {where} is not unpacked as `value, grads = {fn.name}(...)`"
    if not _one_line(assign, src):
        return f"its call {where} shares a line with another statement"
    value, grads = target.elts[0], target.elts[1].id
    loss = _loss(value, has_aux, src)
    if loss is None:
        return f"the loss of its call {where} is not a name (write `loss, grads = ...`)"
    use = GradCall(assign, assign.value, value, loss)
    if (why := _follow(use, grads, after, clip_entry, is_depend, src)) is not None:
        return f"{why} (after {where})"
    if use.clips and parameters(fn, src) is None:
        return (f"the gradients are clipped, and recompat cannot tell torch's parameters from the weights "
                f"{src.segment(fn.weights)} (it knows model.trainable_params() and optimizer.parameters)")
    for _, call in use.clips:
        if isinstance(why := _clip_arguments(call, clip_entry(call.func), src), str):
            return f"the clip {quoted(call, src)}: {why}"
    if use.clips and use.step is None:
        return f"the gradients are clipped after {where} and then never used"
    for stmt in (*(s for s, _ in use.clips), *([use.step] if use.step is not None else [])):
        if not _one_line(stmt, src):
            return f"{quoted(stmt, src)} shares a line with another statement"
    fn.calls.append(use)
    return None


def parameters(fn: GradFunction, src: Source) -> str | None:
    """The torch parameters whose .grad a clip of `fn`'s gradients clips: the weights it differentiates, as torch
    spells them (`model.trainable_params()` -> `model.parameters()`, `optimizer.parameters` -> its groups'
    parameters); None where recompat cannot tell."""
    w = fn.weights
    if isinstance(w, ast.Call) and not w.args and not w.keywords and isinstance(w.func, ast.Attribute) \
            and w.func.attr == "trainable_params":
        return f"{src.segment(w.func.value)}.parameters()"
    if isinstance(w, ast.Attribute) and w.attr == "parameters":
        return f'[p for group in {src.segment(w.value)}.param_groups for p in group["params"]]'
    return None


def _clip_arguments(call: ast.Call, entry: Entry, src: Source) -> dict[str, str] | str:
    """torch's keyword arguments (after the parameters) for MindSpore's clip `call` by its grad_clip entry, or why
    it has none: a MindSpore parameter with no torch counterpart carries over at its MindSpore default only."""
    sig = ast.parse(f"def {entry.mindspore['signature']}: pass").body[0].args
    positional = [a.arg for a in (*sig.posonlyargs, *sig.args)]
    defaults = dict(zip(reversed(positional), reversed(sig.defaults)))
    if any(isinstance(a, ast.Starred) for a in call.args) or any(k.arg is None for k in call.keywords):
        return "its arguments are unpacked"
    given = {**dict(zip(positional, call.args)), **{k.arg: k.value for k in call.keywords}}
    torch_args = {}
    for p in entry.params:
        if p.role == "params" or p.mindspore not in given:
            continue
        value = given[p.mindspore]
        if p.torch is not None:
            torch_args[p.torch] = src.segment(value)
        elif not (isinstance(value, ast.Constant) and p.mindspore in defaults
                  and value.value == ast.literal_eval(defaults[p.mindspore])):
            return f"{p.mindspore}={src.segment(value)} has no torch counterpart ({p.why})"
    return torch_args


def _blank_lines_after(src: Source, stmt: ast.stmt) -> int:
    """Where the removal of `stmt`'s lines ends: past the blank lines after it too where a blank line (or the
    file's start) is before it, so that the code around keeps its spacing."""
    end, line = src.line_end(stmt.end_lineno), stmt.end_lineno + 1
    if stmt.lineno > 1 and src.line(stmt.lineno - 1).strip():
        return end
    while line <= src.text.count("\n") and not src.line(line).strip():
        end, line = src.line_end(line), line + 1
    return end


def rewrite(src: Source, fn: GradFunction, clip: str, entry: Callable[[ast.expr], Entry]) -> None:
    """Write torch's loop for each call of `fn` and remove its definition. `clip`: how the output spells torch's
    clip of the parameters' .grad; `entry`: the grad_clip entry of a clip's function."""
    src.replace(src.line_start(fn.statement.lineno), _blank_lines_after(src, fn.statement), "")
    for use in fn.calls:
        stmt, indent = use.statement, src.indent(use.statement.lineno)
        src.replace(src.start(stmt.targets[0]), src.end(stmt.targets[0]), src.segment(use.value))
        src.replace_node(use.call.func, src.segment(fn.function))
        if use.step is None:    # the value alone: no gradient is used
            continue
        optimizer = src.segment(use.optimizer)
        src.insert(src.line_start(stmt.lineno), f"{indent}{optimizer}.zero_grad()\n")
        end = src.line_end(stmt.end_lineno)
        last = end == len(src.text) and not src.text.endswith(("\n", "\r"))   # the file's last line, unended
        src.insert(end, f"{chr(10) if last else ''}{indent}{use.loss}.backward(){'' if last else chr(10)}")
        for clip_stmt, call in use.clips:
            arguments = "".join(f", {k}={v}" for k, v in _clip_arguments(call, entry(call.func), src).items())
            src.replace_node(clip_stmt, f"{clip}({parameters(fn, src)}{arguments})")
        src.replace_node(use.step, f"{optimizer}.step()")
