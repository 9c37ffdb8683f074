"""The training step, torch -> MindSpore (translate --scope model).

torch's step is statements: the forward that makes the loss, `loss.backward()` (which adds to each parameter's
`.grad`), then `optimizer.step()`. MindSpore differentiates a function. The translation makes one of the statements
that made the loss, in place, and keeps the rest statement for statement on recompat.runtime's `.grad`
(recompat/grads.py):

    for x, y in loader:                             for x, y in loader:
        optimizer.zero_grad()                           zero_grad(optimizer)
        out = model(x)                                  def forward_fn():
        loss = loss_fn(out, y)                              out = model(x)
        loss.backward()                   ->                loss = loss_fn(out, y)
        optimizer.step()                                    return loss, out, loss
                                                        _, out, loss = backward(forward_fn, optimizer.parameters)
                                                        optimizer_step(optimizer)

What the function holds (`find`): the statements just before `backward()` in its block, back to the first that
cannot go into a function called at once: a loop, an `if`/`try`, a definition, a return/break/continue, another
`backward()` or a `step()` (it changes the parameters being differentiated). A `with` goes whole. The function
returns the value differentiated, then every name the statements assign (the code after reads them); a name they
read before they assign it is a parameter. The weights are the parameters of the optimizers the enclosing function
steps (`X.step()` on X built by an optimizer entry, or on which the function also calls zero_grad()).

Where a step cannot be made so, nothing is moved and the reason is said (RC311): backward() with arguments, no
statement before it making the loss, statements on one line, a string across lines (it would be re-indented), a
name the loss is made from that is assigned elsewhere in the loop (its computation would not be differentiated:
gradients of zero, a silent wrong value), or no optimizer known.
"""
from __future__ import annotations

import ast
import re
from dataclasses import dataclass, field

from recompat.translator import names
from recompat.translator.source import Source, statement_blocks

_BOUNDARY = (ast.For, ast.AsyncFor, ast.While, ast.If, ast.Try, ast.FunctionDef, ast.AsyncFunctionDef,
             ast.ClassDef, ast.Return, ast.Break, ast.Continue, ast.Raise, ast.Global, ast.Nonlocal, ast.Import,
             ast.ImportFrom, ast.Delete, ast.Match) + ((ast.TryStar,) if hasattr(ast, "TryStar") else ())
_SCOPES = (ast.FunctionDef, ast.AsyncFunctionDef, ast.Lambda, ast.ClassDef, ast.ListComp, ast.SetComp,
           ast.DictComp, ast.GeneratorExp)
_NEWLINE_BEFORE_TEXT = re.compile(r"(\r\n|\r|\n)(?=[^\r\n])")


@dataclass
class Step:
    statement: ast.Expr            # `<value>.backward()`
    run: list[ast.stmt]            # the statements that made the loss: the function's body
    value: ast.expr                # what backward() is called on
    returned: list[str]            # the names the run assigns, returned after the value
    parameters: list[str]          # the names the run reads before it assigns them
    optimizers: list[str]          # the optimizers stepped, as written: their parameters are the weights
    function: str = "forward_fn"   # the function's name (free in the file)


@dataclass
class Steps:
    """What `find` made of a file: each backward() call's step, or why it has none; the optimizers known."""
    steps: dict[int, Step] = field(default_factory=dict)      # id(the backward Call) -> its step
    refused: dict[int, str] = field(default_factory=dict)     # id(the backward Call) -> why it has none
    optimizers: set[int] = field(default_factory=set)         # id(Call) of each X.step() on an optimizer


def _calls_named(node: ast.AST, attr: str):
    """`X.attr(...)` calls in `node`, nested scopes included (a step in a helper called from the run is one)."""
    for n in ast.walk(node):
        if isinstance(n, ast.Call) and isinstance(n.func, ast.Attribute) and n.func.attr == attr:
            yield n


def _walk_scope(node: ast.AST):
    """`node` and its nodes outside nested scopes (functions, classes, lambdas, comprehensions)."""
    yield node
    todo = list(ast.iter_child_nodes(node))
    while todo:
        n = todo.pop()
        yield n
        if not isinstance(n, _SCOPES):
            todo.extend(ast.iter_child_nodes(n))


def _stored(node: ast.AST) -> list[str]:
    """The names `node` assigns, in order, nested scopes not."""
    out = []
    for n in _walk_scope(node) if not isinstance(node, _SCOPES) else ():
        if isinstance(n, ast.Name) and isinstance(n.ctx, ast.Store) and n.id not in out:
            out.append(n.id)
    return out


def _loaded(node: ast.AST) -> set[str]:
    found = {n.id for n in _walk_scope(node) if isinstance(n, ast.Name) and isinstance(n.ctx, ast.Load)}
    if isinstance(node, ast.AugAssign) and isinstance(node.target, ast.Name):
        found.add(node.target.id)        # x += 1 reads x first
    # names a nested scope reads (a lambda, a comprehension) are read here too
    for n in _walk_scope(node):
        if isinstance(n, _SCOPES) and n is not node:
            found |= {m.id for m in ast.walk(n) if isinstance(m, ast.Name) and isinstance(m.ctx, ast.Load)}
    return found


def _optimizer_names(scope_node: ast.AST, tree: ast.Module, is_optimizer_call) -> list[str]:
    """The optimizers `scope_node` steps, as written (`optimizer`, `self.opt`), in the order of their step()."""
    zeroed = {ast.unparse(c.func.value) for c in _calls_named(scope_node, "zero_grad")}
    built = set()
    for n in ast.walk(tree):
        if isinstance(n, (ast.Assign, ast.AnnAssign)) and isinstance(n.value, ast.Call) \
                and is_optimizer_call(n.value):
            for t in (n.targets if isinstance(n, ast.Assign) else [n.target]):
                built.add(ast.unparse(t))
    found: list[str] = []
    for call in _calls_named(scope_node, "step"):
        text = ast.unparse(call.func.value)
        if (text in built or text in zeroed) and not call.args and not call.keywords and text not in found:
            found.append(text)
    return found


def find(tree: ast.Module, src: Source, is_optimizer_call) -> Steps:
    """Each `<value>.backward()` statement of the file, with its step or the reason it has none.
    `is_optimizer_call(call)`: does the call build an optimizer (an entry of rule optimizer)?"""
    result = Steps()
    taken = {n.id for n in ast.walk(tree) if isinstance(n, ast.Name)} | \
            {n.name for n in ast.walk(tree) if isinstance(n, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef))}
    scopes = [tree] + [n for n in ast.walk(tree) if isinstance(n, (ast.FunctionDef, ast.AsyncFunctionDef))]
    for scope in scopes:
        optimizers = _optimizer_names(scope, tree, is_optimizer_call)
        for call in _calls_named(scope, "step"):
            if ast.unparse(call.func.value) in optimizers:
                result.optimizers.add(id(call))
        for body, loop in _blocks(scope):
            for i, stmt in enumerate(body):
                call = _backward_call(stmt)
                if call is None:
                    continue
                why = _refusal(body, i, call, loop or scope, src, optimizers)
                if isinstance(why, str):
                    result.refused[id(call)] = why
                    continue
                name = _free("forward_fn", taken)
                taken.add(name)
                why.function, why.optimizers = name, optimizers
                result.steps[id(call)] = why
    return result


def _free(name: str, taken: set[str]) -> str:
    n, candidate = 1, name
    while candidate in taken:
        n += 1
        candidate = f"{name}_{n}"
    return candidate


def _blocks(scope: ast.AST):
    """(statement list, the innermost loop around it or None) for each block of `scope`, nested functions not."""
    todo = [(scope.body, None)]
    while todo:
        body, loop = todo.pop()
        yield body, loop
        for stmt in body:
            if isinstance(stmt, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
                continue
            inner = stmt if isinstance(stmt, (ast.For, ast.AsyncFor, ast.While)) else loop
            for block in statement_blocks(stmt):
                todo.append((block, inner))


def _backward_call(stmt: ast.stmt) -> ast.Call | None:
    if isinstance(stmt, ast.Expr) and isinstance(stmt.value, ast.Call) \
            and isinstance(stmt.value.func, ast.Attribute) and stmt.value.func.attr == "backward":
        return stmt.value
    return None


def _zero_grad_statement(stmt: ast.stmt) -> bool:
    return isinstance(stmt, ast.Expr) and isinstance(stmt.value, ast.Call) \
        and isinstance(stmt.value.func, ast.Attribute) and stmt.value.func.attr == "zero_grad"


def _movable(stmt: ast.stmt) -> bool:
    if isinstance(stmt, _BOUNDARY):
        return False
    if any(True for _ in _calls_named(stmt, "backward")) or any(True for _ in _calls_named(stmt, "step")):
        return False
    if isinstance(stmt, (ast.With, ast.AsyncWith)):
        return all(_movable(s) for s in stmt.body)
    return not any(isinstance(n, (ast.Yield, ast.YieldFrom, ast.Await)) for n in _walk_scope(stmt))


def _refusal(body, i, call: ast.Call, around: ast.AST, src: Source, optimizers) -> Step | str:
    """The step of `body[i]` (a backward() statement) inside `around` (its innermost loop, else its function or
    module), or why there is none."""
    if call.args or call.keywords:
        return "backward() with arguments (a gradient, retain_graph, inputs) has no counterpart recompat writes"
    j = i
    while j > 0 and _movable(body[j - 1]):
        j -= 1
    while j < i and _zero_grad_statement(body[j]):
        j += 1                    # it clears .grad before the forward: it stays where it is
    run = body[j:i]
    if not run:
        return ("no statement just before it in its block makes the loss (a loop, an if or a step() comes "
                "first): compute the loss right before backward()")
    if not optimizers:
        return ("no optimizer is known to be stepped here (an optimizer built here, or one this function calls "
                "both zero_grad() and step() on): its parameters are what MindSpore differentiates")
    lines = [s.lineno for s in (*run, body[i])]
    if len(set(lines)) < len(lines) or any(src.line(s.lineno)[:s.col_offset].strip() for s in (*run, body[i])):
        return "statements share a line: put each on its own line"
    for s in run:
        for n in ast.walk(s):
            if isinstance(n, (ast.Constant, ast.JoinedStr)) and n.lineno != n.end_lineno \
                    and isinstance(getattr(n, "value", ""), (str, bytes, type(None))):
                return f"a string across lines (line {n.lineno}) would be re-indented with the statements"
    stored: list[str] = []
    assigned_before: set[str] = set()
    parameters: list[str] = []
    for s in _flat(run):
        for name in sorted(_loaded(s) - assigned_before):
            if name in _all_stored(run) and name not in parameters:
                parameters.append(name)
        for name in _stored(s):
            assigned_before.add(name)
            if name not in stored:
                stored.append(name)
    if not (_loaded(call.func.value) & set(stored)):
        return (f"{ast.unparse(call.func.value)} is not made by the statements just before backward(): compute "
                f"the loss there")
    # what the run reads that the loop (or function) makes elsewhere: its computation would not be differentiated
    inside = {id(n) for s in run for n in ast.walk(s)}
    elsewhere = set()
    targets = set(_stored(around.target)) if isinstance(around, (ast.For, ast.AsyncFor)) else set()
    for n in _walk_scope(around):
        if isinstance(n, ast.Name) and isinstance(n.ctx, ast.Store) and id(n) not in inside:
            elsewhere.add(n.id)
    read = set().union(*(_loaded(s) for s in run)) - set(stored)
    risky = sorted((read & elsewhere) - targets - set(parameters))
    if risky:
        return (f"the loss is also made from {', '.join(risky)}, which the code assigns elsewhere in "
                f"{'the loop' if isinstance(around, (ast.For, ast.AsyncFor, ast.While)) else 'the function'}: "
                f"MindSpore would not differentiate through it; compute it in the statements right before "
                f"backward()")
    return Step(body[i], run, call.func.value, stored, parameters, [])


def _flat(run: list[ast.stmt]):
    for s in run:
        if isinstance(s, (ast.With, ast.AsyncWith)):
            yield from (item for item in s.items)        # a with's items are evaluated first
            yield from _flat(s.body)
        else:
            yield s


def _all_stored(run: list[ast.stmt]) -> set[str]:
    return {name for s in run for name in _stored(s)}


def weights(step: Step) -> str:
    if len(step.optimizers) == 1:
        return f"{step.optimizers[0]}.parameters"
    return "(" + ", ".join(f"*{o}.parameters" for o in step.optimizers) + ")"


def rewrite(src: Source, step: Step, backward: str) -> None:
    """Make the step's function in place (after every other edit inside it was made: they are rendered into it).
    `backward`: how the output spells recompat.runtime.backward (a placeholder)."""
    first = step.run[0]
    indent = src.indent(first.lineno)
    unit = "\t" if "\t" in indent else "    "
    nl = src.newline
    body = src.render(src.start(first), src.start(step.statement)).rstrip()
    body = _NEWLINE_BEFORE_TEXT.sub(lambda m: m.group(1) + unit, body)
    value = src.render_node(step.value)
    returned = ", ".join([value, *step.returned])
    targets = ", ".join(["_", *step.returned]) + " = " if step.returned else ""
    args = "".join(f", {p}" for p in step.parameters)
    text = (f"def {step.function}({', '.join(step.parameters)}):{nl}{indent}{unit}{body}{nl}"
            f"{indent}{unit}return {returned}{nl}"
            f"{indent}{targets}{backward}({step.function}, {weights(step)}{args})")
    src.replace(src.start(first), src.end(step.statement), text)
