"""What a compiled MindSpore graph really recomputes, read from the graph MindSpore saves (GRAPH mode).

    from recompat.compat.graph_recompute import recomputed_ops

    net.b1.recompute()
    for op in recomputed_ops(net, x):
        print(op.scope, op.op, op.mark)        # b1.fc1 MatMul cell / b1 ReLU cell / ...

PyNative shows what recompute keeps through saved-tensor hooks; GRAPH mode has none, and `Primitive.recompute()`
acts there only. So this compiles the cell's gradient (inputs and trainable parameters) in GRAPH mode with
``save_graphs=1`` into a temporary folder (always removed), and reads the final graph (``graph_build_*.ir``): an
operator the graph runs again for backward carries ``duplicated: Bool(1)``, and its ``# Fullname with scope:``
line names the cells it sits in (``Default/net-Net/b1-Block/fc1-Dense/MatMul-op1``), prefixed ``recompute_`` when
a cell mark (``Cell.recompute()``, ``mindspore.recompute``) put it there. The cell is compiled, never run.

The IR text is MindSpore's own and undocumented: the parser reads only the node lines, ``duplicated`` and the
scope line, ignores every other attribute, and raises :class:`IRFormatError` (never an empty answer) where the
graph does not look as it did on the versions in ``CHECKED_ON``, and :class:`PythonFallbackError` where GRAPH mode
ran part of the cell as Python (a ``PyExecute`` node: what it recomputes is not in the graph).
"""
from __future__ import annotations

import contextlib
import logging
import os
import re
import shutil
import tempfile
from dataclasses import dataclass
from pathlib import Path

from .runs import MindSporeGraphError

CHECKED_ON = ("2.10",)          # MindSpore versions whose saved graphs this parser was checked on
WRAPPED_AS = ("forward", "net")  # the scope levels of the compiled wrapper above the cell
MARKS = ("cell", "primitive")

_NODE = re.compile(r"^\s+%\d+\(.*?\)\s*=\s*(?P<op>[\w.:]+)\(")
_SCOPE = re.compile(r"^\s*# Fullname with scope: \((?P<scope>[^)]*)\)")
_DUPLICATED = re.compile(r"\bduplicated: (?:Bool\(1\)|true\b)")     # "true": the IR of MindSpore 1.x (seed 004)
_OP_SEGMENT = re.compile(r"^(?P<op>\w+)-op\d+$")
_CELL_PREFIX = "recompute_"
_FALLBACK = "PyExecute"       # GRAPH mode's node for code it runs as Python (JIT fallback)
_PASSES = "MS_DEV_DUMP_IR_PASSES"     # which passes' graphs MindSpore saves; read at each compile (2.10, measured)
_BACKWARD_PREFIX = "Gradients/"       # a backward op's scope: Gradients/<forward scope>/Grad_<Op>/<op>-opN
# graph plumbing, not computation: a recomputed region's tuple accessors and ordering nodes are cloned with it
STRUCTURAL = frozenset({"TupleGetItem", "MakeTuple", "Depend", "UpdateState", "Load", "Return"})


class IRFormatError(RuntimeError):
    """The saved graph does not read as the parser expects (a MindSpore version it was not checked on)."""


class PythonFallbackError(MindSporeGraphError):
    """GRAPH mode compiled part of the cell to a Python fallback node: its operators are not in the graph."""


@dataclass(frozen=True, order=True)
class RecomputedOp:
    scope: str      # the cell the op sits in, as attribute names from the compiled cell ("b1.fc1"; "" = itself)
    op: str         # MindSpore's op name ("MatMul")
    mark: str       # "cell" (Cell.recompute(), mindspore.recompute) or "primitive" (Primitive.recompute())

    def __str__(self) -> str:
        return f"{self.scope or '(top)'}/{self.op} ({self.mark} mark)"


def recomputed_ops(cell, *inputs, **kw_inputs) -> list[RecomputedOp]:
    """The operators the compiled gradient of ``cell(*inputs, **kw_inputs)`` recomputes, sorted by scope.

    Inputs are MindSpore Tensors (or what the cell's construct takes). The process's MindSpore mode and graph-saving
    settings are put back as they were; a cell GRAPH mode cannot compile raises :class:`MindSporeGraphError`.
    """
    import mindspore as ms

    folder = Path(tempfile.mkdtemp(prefix="recompat-graphs-"))
    before = {key: ms.get_context(key) for key in ("mode", "save_graphs", "save_graphs_path")}
    passes = os.environ.get(_PASSES)
    os.environ[_PASSES] = "graph_build"         # the final graph only: 12 files, not 100 (2.2x less compile time)
    try:
        with _quiet_mindspore_warnings():
            ms.set_context(mode=ms.GRAPH_MODE, save_graphs=1, save_graphs_path=str(folder))
        grad = _gradient_cell_class()(cell, len(inputs), tuple(kw_inputs))
        try:
            grad.compile(*inputs, *kw_inputs.values())
        except Exception as err:
            first = (str(err).strip().splitlines() or [type(err).__name__])[0]
            raise MindSporeGraphError(
                f"MindSpore GRAPH mode could not compile the gradient of {type(cell).__name__}: {first}\n"
                f"(what a cell recomputes is read from its compiled graph; MindSpore's full message is chained "
                f"below)") from err
        return read_saved_graphs(folder, what=type(cell).__name__)
    finally:
        with _quiet_mindspore_warnings():
            ms.set_context(**before)
        if passes is None:
            os.environ.pop(_PASSES, None)
        else:
            os.environ[_PASSES] = passes
        shutil.rmtree(folder, ignore_errors=True)


def within(scope: str, region: str) -> bool:
    """``scope`` is ``region`` or a cell inside it (dotted attribute paths)."""
    return scope == region or scope.startswith(region + ".")


def unrecomputed(found: list[RecomputedOp], regions) -> list[str]:
    """The regions (cell paths) that hold none of the recomputed operators ``found``."""
    return [r for r in regions if not any(within(op.scope, r) for op in found)]


def torch_recomputed_modules(model, *inputs, **kw_inputs) -> list[str]:
    """The outermost sub-modules of a torch ``model`` whose forward runs again during backward: what its
    checkpointing recomputes, as module paths (the regions :func:`unrecomputed` asks a MindSpore twin about).
    A rerun is seen where it goes through the module's ``__call__``, as torch's checkpoint and checkpoint_wrapper
    do (recompat's ``mark_recompute`` calls ``forward`` itself: the module's children show instead).

    Runs ``model(*inputs, **kw_inputs)`` and the backward of the sum of its floating outputs once; inputs are torch
    tensors."""
    import torch

    rerun: set[str] = set()
    in_backward = [False]

    def seen(name):
        return lambda module, args: rerun.add(name) if in_backward[0] else None

    handles = [module.register_forward_pre_hook(seen(name)) for name, module in model.named_modules() if name]
    try:
        out = model(*inputs, **kw_inputs)
        leaves = out.values() if isinstance(out, dict) else out if isinstance(out, (tuple, list)) else [out]
        loss = sum(leaf.float().sum() for leaf in leaves
                   if isinstance(leaf, torch.Tensor) and leaf.is_floating_point() and leaf.requires_grad)
        in_backward[0] = True
        loss.backward()
    finally:
        for handle in handles:
            handle.remove()
    return sorted(name for name in rerun if not any(within(name, other) for other in rerun if other != name))


def primitive_marks(cell) -> list[tuple[str, str]]:
    """(scope, op name) of each operator ``cell`` and its sub-cells hold with a ``Primitive.recompute()`` mark."""
    return [(scope, primitive.name) for scope, sub in cell.cells_and_names()
            for primitive in sub._primitives.values()                # pylint: disable=protected-access
            if primitive is not None and primitive.attrs.get("recompute") is True]


def read_saved_graphs(folder: Path, *, what: str = "the cell") -> list[RecomputedOp]:
    """The recomputed operators of every final graph (``graph_build_*.ir``) MindSpore saved into ``folder``."""
    files = sorted(Path(folder).glob("graph_build_*.ir"))
    if not files:
        seen = sorted(p.name for p in Path(folder).iterdir())[:8]
        raise IRFormatError(
            f"MindSpore saved no final graph (graph_build_*.ir) for {what} into {folder} (it holds: "
            f"{', '.join(seen) or 'nothing'}); recompat reads the graphs of MindSpore {', '.join(CHECKED_ON)}, "
            f"this is {_mindspore_version()}")
    found: list[RecomputedOp] = []
    for path in files:
        found += parse_graph_ir(path.read_text(encoding="utf-8", errors="replace"), source=path.name)
    return sorted(found)


def parse_graph_ir(text: str, *, source: str = "the graph", root: tuple[str, ...] = WRAPPED_AS) -> list[RecomputedOp]:
    """The operators marked ``duplicated`` in one saved graph's text, scoped below the cell ``root`` names."""
    found: list[RecomputedOp] = []
    fallbacks: list[str] = []
    nodes = scopes = 0
    pending: tuple[str, int, bool] | None = None    # (op, line, duplicated) of the node waiting for its scope line
    for number, line in enumerate(text.splitlines(), 1):
        node = _NODE.match(line)
        if node:
            if pending and pending[2]:
                raise _format_error(source, pending[1], "a recomputed node has no '# Fullname with scope:' line")
            nodes += 1
            pending = (node["op"], number, bool(_DUPLICATED.search(line)))
            continue
        scope = _SCOPE.match(line)
        if scope:
            scopes += 1
            if pending and pending[0] == _FALLBACK:
                fallbacks.append(scope["scope"])
            elif pending and pending[2]:
                op = _recomputed(scope["scope"], source, number, root)
                if op.op not in STRUCTURAL:
                    found.append(op)
            pending = None
    if pending and pending[2]:
        raise _format_error(source, pending[1], "a recomputed node has no '# Fullname with scope:' line")
    if not nodes or not scopes:
        raise _format_error(source, 0, f"{nodes} operator lines and {scopes} scope lines were found")
    if fallbacks:
        raise PythonFallbackError(
            f"GRAPH mode did not compile all of the cell: {len(fallbacks)} part(s) run as Python ({_FALLBACK} at "
            f"{', '.join(sorted(set(fallbacks))[:3])}), and what Python runs is not in the graph, so what it "
            f"recomputes cannot be read ({source}). Make those parts compile (MindSpore's jit_syntax_level=STRICT "
            f"names the construct it falls back on)")
    return found


def _recomputed(full_scope: str, source: str, line: int, root: tuple[str, ...]) -> RecomputedOp:
    scope = full_scope.removeprefix(_BACKWARD_PREFIX)
    mark = "cell" if scope.startswith(_CELL_PREFIX) else "primitive"
    parts = scope.removeprefix(_CELL_PREFIX).split("/")
    op = _OP_SEGMENT.match(parts[-1])
    if not op or parts[0] != "Default":
        raise _format_error(source, line, f"the scope {full_scope!r} is not Default/<cell>-<Class>/.../<Op>-op<N>")
    # each cell level is "<attribute>-<Class>" (only "<attribute>" where reserve_class_name_in_scope is off);
    # a backward op's own level, Grad_<Op>, is no cell
    attrs = [segment.split("-", 1)[0] for segment in parts[1:-1] if not segment.startswith("Grad_")]
    if tuple(attrs[:len(root)]) == root:
        attrs = attrs[len(root):]
    return RecomputedOp(scope=".".join(attrs), op=op["op"], mark=mark)


def _format_error(source: str, line: int, problem: str) -> IRFormatError:
    where = f"{source}, line {line}" if line else source
    return IRFormatError(
        f"cannot read MindSpore's saved graph ({where}): {problem}. recompat reads the graphs of MindSpore "
        f"{', '.join(CHECKED_ON)}; this is {_mindspore_version()}: please report the graph with the issue")


def _mindspore_version() -> str:
    try:
        import mindspore
    except ImportError:
        return "no MindSpore"
    return f"MindSpore {mindspore.__version__}"


@contextlib.contextmanager
def _quiet_mindspore_warnings():
    """MindSpore 2.10 warns that save_graphs moves to an environment variable, which it reads once per process."""
    from mindspore.log import _get_logger

    logger = _get_logger()
    level = logger.level
    logger.setLevel(logging.ERROR)
    try:
        yield
    finally:
        logger.setLevel(level)


_GRADIENT_CELL = None


def _gradient_cell_class():
    """A Cell whose construct is the gradient of the wrapped cell (scopes nest under a Cell, not under ms.grad)."""
    global _GRADIENT_CELL
    if _GRADIENT_CELL is not None:
        return _GRADIENT_CELL
    import mindspore as ms
    from mindspore import nn, ops

    class _Forward(nn.Cell):
        def __init__(self, net, n_positional, keys):
            super().__init__()
            self.net = net
            self.n_positional = n_positional
            self.keys = keys

        def construct(self, *args):
            kw = {}
            for i in range(len(self.keys)):
                kw[self.keys[i]] = args[self.n_positional + i]
            return self.net(*args[:self.n_positional], **kw)

    class _Gradient(nn.Cell):
        def __init__(self, net, n_positional, keys):
            super().__init__()
            self.forward = _Forward(net, n_positional, keys)
            self.weights = ms.ParameterTuple(net.trainable_params())
            self.grad = ops.GradOperation(get_all=True, get_by_list=True)

        def construct(self, *args):
            return self.grad(self.forward, self.weights)(*args)

    _GRADIENT_CELL = _Gradient
    return _Gradient
