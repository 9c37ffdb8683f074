"""The training step, torch -> MindSpore (translate --scope model).

torch's step is statements: the forward that makes the loss, `loss.backward()` (which adds to each parameter's
`.grad`), then `optimizer.step()`. MindSpore differentiates a function. The translation makes one of the statements
that made the loss, in place, and keeps the rest statement for statement on recompat.runtime's `.grad`
(recompat/grads.py):

    for x, y in loader:                             for x, y in loader:
        optimizer.zero_grad()                           zero_grad(optimizer)
        out = model(x)                                  def forward_fn():
        loss = loss_fn(out, y)                              nonlocal out, loss
        loss.backward()                   ->                out = model(x)
        optimizer.step()                                    loss = loss_fn(out, y)
                                                            return loss
                                                        backward(forward_fn, optimizer.parameters)
                                                        optimizer_step(optimizer)

What the function holds (`find`): the statements just before `backward()` in its block, back to the first that
cannot go into a function called at once: a definition, an import, a `global`/`nonlocal`, a `return`/`yield`, a
`break`/`continue` of the loop around, another `backward()` or a `step()` (it changes the parameters being
differentiated). An `if`, a `with`, a loop go whole; leading `zero_grad()` statements stay where they are. The names
the statements assign are declared `nonlocal` (`global` at module level), so each is the enclosing scope's own
variable, bound or left as the code leaves it, and the function returns the value differentiated. The weights are
the parameters of the optimizers the enclosing function steps (`X.step()` on X built by an optimizer entry, or on
which the function also calls zero_grad()).

Where a step cannot be made so, nothing is moved and the reason is said (RC343): backward() with arguments, no
statement before it making the loss, statements on one line, a string across lines (it would be re-indented), a
name the loss is made from that is assigned elsewhere in the loop (its computation would not be differentiated:
gradients of zero, a silent wrong value), or no optimizer known.
"""
from __future__ import annotations

import ast
import builtins
import re
from dataclasses import dataclass, field

from recompat.translator import names, tree_index
from recompat.translator.source import Source, statement_blocks

_BOUNDARY = (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef, ast.Return, ast.Global, ast.Nonlocal, ast.Import,
             ast.ImportFrom, ast.Delete)
_LOOPS = (ast.For, ast.AsyncFor, ast.While)
GRAD_SCALER = "grad_scaler"   # what a file builds with an entry marked steps_optimizer (models.py's _built_by)
_SCOPES = (ast.FunctionDef, ast.AsyncFunctionDef, ast.Lambda, ast.ClassDef, ast.ListComp, ast.SetComp,
           ast.DictComp, ast.GeneratorExp)
_NEWLINE_BEFORE_TEXT = re.compile(r"(\r\n|\r|\n)(?=[^\r\n])")


@dataclass
class Step:
    statement: ast.Expr            # `<value>.backward()`
    run: list[ast.stmt]            # the statements that made the loss: the function's body
    value: ast.expr                # what backward() is called on
    assigned: list[str]            # the names the run assigns: the enclosing scope's (nonlocal / global)
    declare: str                   # "nonlocal" in a function, "global" at module level
    optimizers: list[str]          # the optimizers stepped (bound on every path), as written
    unbound: list[str] = field(default_factory=list)   # assigned only in the run: declared before the function
    function: str = "forward_fn"   # the function's name (free in the file)
    models: list[str] = field(default_factory=list)   # what the run calls that is bound before it: the models


@dataclass
class Steps:
    """What `find` made of a file: each backward() call's step, or why it has none; the optimizers known."""
    steps: dict[int, Step] = field(default_factory=dict)      # id(the backward Call) -> its step
    refused: dict[int, str] = field(default_factory=dict)     # id(the backward Call) -> why it has none
    optimizers: set[int] = field(default_factory=set)         # id(Call) of each X.step() on an optimizer
    left: set[int] = field(default_factory=set)               # id(Call) of zero_grad()/step() of a step left whole
    unknown: set[int] = field(default_factory=set)            # id(Call) of a step() beside a step, on what is unknown


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
    """The names `node` assigns, in the order they are written, nested scopes not."""
    found = sorted((n.lineno, n.col_offset, n.id) for n in (_walk_scope(node) if not isinstance(node, _SCOPES) else ())
                   if isinstance(n, ast.Name) and isinstance(n.ctx, ast.Store))
    out: list[str] = []
    for _, _, name in found:
        if name not in out:
            out.append(name)
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


def _built(idx, builds) -> dict[str, str]:
    """What the file assigns from a call of an entry, as written (`optimizer`, `self.opt`) -> the entry's rule."""
    found = {}
    for n in idx.of(ast.Assign, ast.AnnAssign):
        if isinstance(n.value, ast.Call) and (rule := builds(n.value)) is not None:
            for t in (n.targets if isinstance(n, ast.Assign) else [n.target]):
                found[ast.unparse(t)] = rule
    return found


def _scaler_step(call: ast.Call, built: dict[str, str]) -> str | None:
    """`scaler.step(optimizer)` on what the file builds as a grad scaler: the optimizer it steps, as written."""
    if built.get(ast.unparse(call.func.value)) == GRAD_SCALER and len(call.args) == 1 and not call.keywords:
        return ast.unparse(call.args[0])
    return None


def _optimizer_names(steps: list[ast.Call], zero_grads: list[ast.Call], built: dict[str, str]) -> list[str]:
    """The optimizers stepped (`steps`: the scope's X.step() calls), as written (`optimizer`, `self.opt`), in the
    order of their step(): one built by an optimizer entry, or one the scope also calls zero_grad() on, or the one
    a grad scaler steps (`scaler.step(optimizer)`)."""
    zeroed = {ast.unparse(c.func.value) for c in zero_grads}
    found: list[str] = []
    for call in steps:
        text = ast.unparse(call.func.value)
        stepped = _scaler_step(call, built)
        if stepped is not None:
            text = stepped
        elif not ((built.get(text) == "optimizer" or text in zeroed) and not call.args and not call.keywords):
            continue
        if text not in found:
            found.append(text)
    return found


def find(tree: ast.Module, src: Source, builds) -> Steps:
    """Each `<value>.backward()` statement of the file, with its step or the reason it has none.
    `builds(call)`: the rule of the entry the call builds with (optimizer, lr_schedule, ...), or None."""
    result = Steps()
    idx = tree_index.index(tree)       # the file's one index, shared with the passes: no walk of our own
    loop_calls = [n for n in idx.of(ast.Call) if isinstance(n.func, ast.Attribute)
                  and n.func.attr in ("backward", "step", "zero_grad")]
    if not loop_calls:            # most model files: nothing of a training step
        return result
    taken = {n.id for n in idx.of(ast.Name)} | \
            {n.name for n in idx.of(ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)}
    scopes = [tree] + [n for n in idx.of(ast.FunctionDef, ast.AsyncFunctionDef)
                       if any(n.lineno <= c.lineno <= n.end_lineno for c in loop_calls)]
    built = _built(idx, builds)

    def calls(scope, attr: str) -> list[ast.Call]:     # X.attr(...) in the scope, its nested functions too
        return [c for c in loop_calls if c.func.attr == attr
                and (scope is tree or scope.lineno <= c.lineno <= scope.end_lineno)]

    for scope in scopes:
        optimizers = _optimizer_names(calls(scope, "step"), calls(scope, "zero_grad"), built)
        for call in calls(scope, "step"):
            if ast.unparse(call.func.value) in optimizers:
                result.optimizers.add(id(call))
        for body, loop in _blocks(scope):
            for i, stmt in enumerate(body):
                call = _backward_call(stmt)
                if call is None:
                    continue
                why = _refusal(body, i, call, loop or scope, scope, tree, src, optimizers)
                if isinstance(why, str):
                    result.refused[id(call)] = why
                    # the step is left whole: its zero_grad() and step() as they are, never half-rewritten
                    for c in (*calls(scope, "step"), *calls(scope, "zero_grad")):
                        result.optimizers.discard(id(c))
                        result.left.add(id(c))
                    continue
                name = _free("forward_fn", taken)
                taken.add(name)
                why.function = name
                result.steps[id(call)] = why
                # a step() on something neither stepped as an optimizer nor built as a schedule: say so
                for c in calls(scope, "step"):
                    text = ast.unparse(c.func.value)
                    if text not in optimizers and built.get(text) not in ("lr_schedule", GRAD_SCALER) \
                            and id(c) not in result.left:
                        result.unknown.add(id(c))
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
    """Can the statement run inside a function called where it stands, to the same effect?"""
    if isinstance(stmt, _BOUNDARY):
        return False
    if any(True for _ in _calls_named(stmt, "backward")) or any(True for _ in _calls_named(stmt, "step")):
        return False
    return not _escapes(stmt, in_loop=False)


def _escapes(node: ast.AST, in_loop: bool) -> bool:
    """Does `node` leave the code around it: return, yield, await, global/nonlocal, import, a definition, or a
    break/continue of a loop outside it?"""
    for child in ast.iter_child_nodes(node):
        if isinstance(child, (ast.Lambda, ast.ListComp, ast.SetComp, ast.DictComp, ast.GeneratorExp)):
            continue
        if isinstance(child, (*_BOUNDARY, ast.Yield, ast.YieldFrom, ast.Await)):
            return True
        if isinstance(child, (ast.Break, ast.Continue)) and not in_loop:
            return True
        if _escapes(child, in_loop or isinstance(child, _LOOPS)):
            return True
    return False


def _refusal(body, i, call: ast.Call, around: ast.AST, scope: ast.AST, tree: ast.Module, src: Source,
             optimizers) -> Step | str:
    """The step of `body[i]` (a backward() statement) inside `around` (its innermost loop, else `scope`: its
    function or module), or why there is none."""
    if call.args or call.keywords:
        return "backward() with arguments (a gradient, retain_graph, inputs) has no counterpart recompat writes"
    j = i
    while j > 0 and _movable(body[j - 1]):
        j -= 1
    while j < i and _zero_grad_statement(body[j]):
        j += 1                    # it clears .grad before the forward: it stays where it is
    run = _after_setup(body[j:i], tree, optimizers)
    if not run:
        return ("no statement just before it in its block makes the loss (a loop, an if or a step() comes "
                "first): compute the loss right before backward()")
    lines = [s.lineno for s in (*run, body[i])]
    if len(set(lines)) < len(lines) or any(src.line(s.lineno)[:s.col_offset].strip() for s in (*run, body[i])):
        return "statements share a line: put each on its own line"
    for s in run:
        for n in ast.walk(s):
            if (isinstance(n, ast.JoinedStr) or isinstance(n, ast.Constant) and isinstance(n.value, (str, bytes))) \
                    and n.lineno != n.end_lineno:
                return f"a string across lines (line {n.lineno}) would be re-indented with the statements"
    stored: list[str] = []
    for s in run:
        stored += [name for name in _stored(s) if name not in stored]
    if not (_loaded(call.func.value) & _reads(run, set(), set())):     # made on every path through them
        return (f"{ast.unparse(call.func.value)} is not made by the statements just before backward() (on every "
                f"path through them): compute the loss there")
    # what the run reads that the loop (or function) makes elsewhere: its computation would not be differentiated
    inside = {id(n) for s in run for n in ast.walk(s)}
    elsewhere: dict[str, list[ast.AST]] = {}     # name -> the statements outside the run that assign it
    targets = set(_stored(around.target)) if isinstance(around, (ast.For, ast.AsyncFor)) else set()
    for n in _walk_scope(around):
        if id(n) in inside or n is around:
            continue
        if isinstance(n, (ast.Assign, ast.AugAssign, ast.AnnAssign)):
            bound = [t for t in (n.targets if isinstance(n, ast.Assign) else [n.target])]
        elif isinstance(n, (ast.For, ast.AsyncFor)):
            bound = [n.target]
        elif isinstance(n, (ast.With, ast.AsyncWith)):
            bound = [item.optional_vars for item in n.items if item.optional_vars is not None]
        elif isinstance(n, ast.NamedExpr):
            bound = [n.target]
        else:
            continue
        for target in bound:
            for name in _stored(target):
                elsewhere.setdefault(name, []).append(n)
    risky = (_read_first(run) & set(elsewhere)) - targets
    called = _called(run, set(stored), tree)      # the models the statements call, as written
    if not isinstance(around, _LOOPS):
        # straight-line code before the step sets it up (the model built, the optimizer, the data made by no call
        # of a variable): a value made by calling one (out = model(x) before a boundary) is what MindSpore would
        # not differentiate through; what the step is given to differentiate (the models, optimizers) is no value
        holders = {m.split(".")[0] for m in called} | set(optimizers)
        risky = {name for name in risky - holders
                 if any(_called([a], set(), tree) for a in elsewhere[name])}
    risky = sorted(risky)
    if risky:
        return (f"the loss is also made from {', '.join(risky)}, which the code assigns elsewhere in "
                f"{'the loop' if isinstance(around, _LOOPS) else 'the function'}: "
                f"MindSpore would not differentiate through it; compute it in the statements right before "
                f"backward()")
    start = run[0].lineno                         # what backward() is given must be bound before the function
    stepped = [o for o in optimizers if o not in stored and _surely_bound(o, tree, scope, start)]
    models = [m for m in called
              if m not in stepped and _surely_bound(m if m.startswith("self.") else m.split(".")[0], tree, scope,
                                                    start)]
    if not stepped and not models:
        return ("nothing here says what to differentiate with respect to: no optimizer is stepped (one built "
                "here, or one this function calls both zero_grad() and step() on) and the statements call no model "
                "held in a variable bound on every path")
    declare = "global" if isinstance(scope, ast.Module) or stored and set(stored) & _globals(scope) else "nonlocal"
    unbound = [] if declare == "global" else [n for n in stored if n not in _bound_outside(scope, inside)]
    return Step(body[i], run, call.func.value, stored, declare, stepped, unbound, models=models)


def _read_first(run: list[ast.stmt]) -> set[str]:
    """The names the run may read before it assigns them: their values come from outside it."""
    found: set[str] = set()
    _reads(run, set(), found)
    return found


def _reads(body: list[ast.stmt], assigned: set[str], found: set[str]) -> set[str]:
    """Walk `body` in order: add to `found` each name read while not surely assigned; return what is surely
    assigned after it (a branch's names only where every branch assigns them)."""
    assigned = set(assigned)
    for stmt in body:
        blocks = list(statement_blocks(stmt))
        if not blocks:
            found |= _loaded(stmt) - assigned
            assigned |= set(_stored(stmt))
            continue
        heads = [getattr(stmt, k) for k in ("test", "iter") if getattr(stmt, k, None) is not None]
        heads += [item.context_expr for item in getattr(stmt, "items", ())]
        for head in heads:
            found |= _loaded(head) - assigned
        if isinstance(stmt, (ast.For, ast.AsyncFor)):
            assigned |= set(_stored(stmt.target))
        for item in getattr(stmt, "items", ()):
            if item.optional_vars is not None:
                assigned |= set(_stored(item.optional_vars))
        after = [_reads(block, assigned, found) for block in blocks]
        if isinstance(stmt, (ast.With, ast.AsyncWith)):
            assigned = after[0]
        elif isinstance(stmt, ast.If) and stmt.orelse:
            assigned = set.intersection(*after)
    return assigned


def _bound_outside(scope: ast.AST, inside: set[int]) -> set[str]:
    """The names `scope` (a function) binds outside the run: its parameters, assignments, loop targets, imports."""
    bound = {a.arg for a in (*scope.args.posonlyargs, *scope.args.args, *scope.args.kwonlyargs,
                              *([scope.args.vararg] if scope.args.vararg else []),
                              *([scope.args.kwarg] if scope.args.kwarg else []))}
    for n in _walk_scope(scope):
        if id(n) in inside or n is scope:
            continue
        if isinstance(n, ast.Name) and isinstance(n.ctx, (ast.Store, ast.Del)):
            bound.add(n.id)
        elif isinstance(n, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
            bound.add(n.name)
        elif isinstance(n, (ast.Import, ast.ImportFrom)):
            bound |= {(a.asname or a.name).split(".")[0] for a in n.names}
    return bound


def _after_setup(run: list[ast.stmt], tree: ast.Module, optimizers: list[str]) -> list[ast.stmt]:
    """The run without its leading docstring and the leading statements that build what it calls (`model = Net()`,
    calling nothing a variable holds) or the optimizers it steps: they go before the function, so that what
    backward() is given is bound."""
    while run and isinstance(run[0], ast.Expr) and isinstance(run[0].value, ast.Constant):
        run = run[1:]             # a docstring (the function's own: it stays its __doc__) or a bare string
    called = {m.split(".")[0] for m in _called(run, set(), tree)}
    cut = 0
    for k, stmt in enumerate(run):
        binds = set(_stored(stmt))
        if binds & set(optimizers):
            cut = k + 1
            continue
        if _called([stmt], set(), tree):
            break
        if called & binds:
            cut = k + 1
    return run[cut:]


def _globals(scope: ast.AST) -> set[str]:
    return {name for n in _walk_scope(scope) if isinstance(n, ast.Global) for name in n.names}


def weights(step: Step) -> str:
    """What backward() is given to differentiate with respect to: the models the statements call and the optimizers
    stepped (recompat.runtime.backward takes the parameters of those that are Cells or optimizers)."""
    return ", ".join([*step.models, *step.optimizers])


def _surely_bound(text: str, tree: ast.Module, scope: ast.AST, line: int) -> bool:
    """Is `text` bound when the step starts (at `line`): an attribute (set up in __init__), a parameter of the
    function, or assigned on every path before it, by the function's statements or the blocks around the step, or
    at the top of the module (for a function)?"""
    if "." in text:
        return True
    if not isinstance(scope, ast.Module) and text in {a.arg for a in (*scope.args.posonlyargs, *scope.args.args,
                                                                         *scope.args.kwonlyargs)}:
        return True
    if _binds([s for s in _enclosing_blocks(scope, line) if s.end_lineno < line], text):
        return True
    return not isinstance(scope, ast.Module) and _binds(tree.body, text)


def _enclosing_blocks(scope: ast.AST, line: int) -> list[ast.stmt]:
    """The statements of every block of `scope` that holds `line`, outermost first (nested functions not)."""
    found: list[ast.stmt] = []
    body = scope.body
    while body:
        found += body
        holder = next((s for s in body if s.lineno <= line <= s.end_lineno
                       and not isinstance(s, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef))), None)
        inner = [b for b in statement_blocks(holder) if b and b[0].lineno <= line <= b[-1].end_lineno] \
            if holder is not None else []
        body = inner[0] if inner else []
    return found


def _binds(body: list[ast.stmt], text: str) -> bool:
    """Does `body` bind the name on every path through it (an assignment, a with's body, both branches of an if)?"""
    for stmt in body:
        if isinstance(stmt, (ast.Assign, ast.AnnAssign)) and (stmt.value is not None) and text in {
                ast.unparse(t) for t in (stmt.targets if isinstance(stmt, ast.Assign) else [stmt.target])}:
            return True
        if isinstance(stmt, (ast.With, ast.AsyncWith)) and _binds(stmt.body, text):
            return True
        if isinstance(stmt, ast.If) and stmt.orelse and _binds(stmt.body, text) and _binds(stmt.orelse, text):
            return True
    return False


def _called(run: list[ast.stmt], assigned: set[str], tree: ast.Module) -> list[str]:
    """What the run calls, or calls a method of (`model(x)`, `self.model(x)`, `model.encode(x)`), named by a
    variable bound outside it: the models whose parameters the step differentiates. Imported names, the file's
    functions and classes, and builtins are none (what is no Cell is passed over when the step runs); the caller
    keeps those bound on every path."""
    imported = {name for stmt in names.imports(tree) for name, _, _ in names.import_bindings(stmt)}
    defined = {n.name for n in ast.walk(tree) if isinstance(n, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef))}
    skip = imported | defined | assigned | set(dir(builtins))
    found: list[str] = []
    for stmt in run:
        calls = sorted((n for n in _walk_scope(stmt) if isinstance(n, ast.Call)),
                       key=lambda n: (n.func.lineno, n.func.col_offset))
        for n in calls:
            callee = n.func
            chain = names.attribute_chain(callee)
            if chain and len(chain) > (2 if chain[0] == "self" else 1):
                callee = n.func.value                        # model.encode(x), self.net.encode(x): the model
                chain = names.attribute_chain(callee)
            if chain and chain[0] not in skip and (chain[0] != "self" or len(chain) > 1):
                text = ".".join(chain)
                if text not in found:
                    found.append(text)
    return found


def rewrite(src: Source, step: Step, backward: str) -> None:
    """Make the step's function in place (after every other edit inside it was made: they are rendered into it).
    `backward`: how the output spells recompat.runtime.backward (a placeholder)."""
    start = step.run[0]
    indent = src.indent(start.lineno)
    unit = "\t" if "\t" in indent else "    "
    nl = src.newline
    body = src.render(src.start(start), src.start(step.statement)).rstrip()
    body = _NEWLINE_BEFORE_TEXT.sub(lambda m: m.group(1) + unit, body)
    declared = f"{step.declare} {', '.join(step.assigned)}{nl}{indent}{unit}" if step.assigned else ""
    # a name only the function assigns still needs a binding here for `nonlocal`; unbound until it runs, as before
    first = "".join(f"{name}: object{nl}{indent}" for name in step.unbound)
    text = (f"{first}def {step.function}():{nl}{indent}{unit}{declared}{body}{nl}"
            f"{indent}{unit}return {src.render_node(step.value)}{nl}"
            f"{indent}{backward}({step.function}, {weights(step)})")
    src.replace(src.start(start), src.end(step.statement), text)
