"""recomputed_ops: what a compiled GRAPH-mode gradient recomputes, read from the graph MindSpore saves.

Each test compiles a tiny cell (never runs it) and asserts exactly the recomputed scopes; the parser tests feed it
text shaped like MindSpore 2.10's saved graphs, and text that is not.
"""
from __future__ import annotations

import os
import tempfile

os.environ.setdefault("GLOG_v", "3")

import numpy as np
import pytest

import mindspore as ms
from mindspore import Tensor, nn, ops

from recompat.compat import recomputed_ops
from recompat.compat.graph_recompute import (IRFormatError, PythonFallbackError, RecomputedOp, parse_graph_ir,
                                             read_saved_graphs)
from recompat.compat.runs import MindSporeGraphError

pytestmark = pytest.mark.runtime


class Block(nn.Cell):
    def __init__(self):
        super().__init__()
        self.fc1 = nn.Dense(4, 4)
        self.relu = ops.ReLU()
        self.fc2 = nn.Dense(4, 4)

    def construct(self, x):
        return self.fc2(self.relu(self.fc1(x)))


class TwoBlocks(nn.Cell):
    def __init__(self, function_form=False):
        super().__init__()
        self.b1 = Block()
        self.b2 = Block()
        self.unused = Block()
        self.function_form = function_form

    def construct(self, x, scale=1.0):
        h = ms.recompute(self.b1, x) if self.function_form else self.b1(x)
        return self.b2(h) * scale


class Stack(nn.Cell):
    """Blocks built in a loop, as _make_layer does."""

    def __init__(self, n=3):
        super().__init__()
        self.layers = nn.CellList([Block() for _ in range(n)])
        self.seq = nn.SequentialCell(Block(), Block())

    def construct(self, x):
        for layer in self.layers:
            x = layer(x)
        return self.seq(x)


def x_of():
    return Tensor(np.random.default_rng(0).standard_normal((2, 4)).astype(np.float32))


def whole_block(scope: str, mark: str = "cell") -> list[RecomputedOp]:
    """What recomputing a Block recomputes: fc1 and the ReLU (fc2 makes the block's output, which is kept)."""
    return sorted([RecomputedOp(scope, "ReLU", mark), RecomputedOp(f"{scope}.fc1", "BiasAdd", mark),
                   RecomputedOp(f"{scope}.fc1", "MatMul", mark)])


@pytest.fixture(autouse=True)
def own_tempdir(tmp_path, monkeypatch):
    """Temporary folders under tmp_path, so a test can see that none is left behind; cwd there too."""
    monkeypatch.setattr(tempfile, "tempdir", str(tmp_path))
    monkeypatch.chdir(tmp_path)
    ms.set_context(mode=ms.PYNATIVE_MODE)
    yield tmp_path
    assert not list(tmp_path.glob("recompat-graphs-*")), "the saved graphs were left behind"


def test_no_mark_recomputes_nothing():
    assert recomputed_ops(TwoBlocks(), x_of()) == []


def test_a_cell_mark_recomputes_that_cell_only():
    net = TwoBlocks()
    net.b1.recompute()
    assert recomputed_ops(net, x_of()) == whole_block("b1")


def test_a_primitive_mark_recomputes_that_op_only():
    net = TwoBlocks()
    net.b1.relu.recompute()
    assert recomputed_ops(net, x_of()) == [RecomputedOp("b1", "ReLU", "primitive")]


def test_an_undone_primitive_mark_recomputes_nothing():
    net = TwoBlocks()
    net.b1.relu.recompute()
    ops.Primitive.recompute(net.b1.relu, False)     # the mark shadows the method: see the fact test below
    assert recomputed_ops(net, x_of()) == []


def test_marks_inside_loop_built_blocks():
    net = Stack()
    net.layers[1].recompute()
    net.seq[0].recompute()
    assert recomputed_ops(net, x_of()) == sorted(whole_block("layers.1") + whole_block("seq.0"))


def test_a_marked_cell_that_is_never_called_recomputes_nothing():
    net = TwoBlocks()
    net.unused.recompute()
    assert recomputed_ops(net, x_of()) == []


def test_the_function_form_is_a_cell_mark():
    assert recomputed_ops(TwoBlocks(function_form=True), x_of()) == whole_block("b1")


def test_keyword_inputs():
    net = TwoBlocks()
    net.b1.recompute()
    assert recomputed_ops(net, x_of(), scale=Tensor(2.0, ms.float32)) == whole_block("b1")


def test_the_process_settings_are_put_back(monkeypatch):
    ms.set_context(save_graphs_path="keep-me")
    monkeypatch.setenv("MS_DEV_DUMP_IR_PASSES", "mine")
    recomputed_ops(TwoBlocks(), x_of())
    assert os.environ["MS_DEV_DUMP_IR_PASSES"] == "mine"
    assert ms.get_context("mode") == ms.PYNATIVE_MODE
    assert ms.get_context("save_graphs") == 0
    assert ms.get_context("save_graphs_path").endswith("keep-me")
    ms.set_context(save_graphs_path=".")


def test_a_cell_graph_mode_cannot_compile_raises_and_cleans_up():
    class Unsupported(nn.Cell):
        def construct(self, x):
            return Tensor(np.asarray(x.shape)) * x        # (2,) times (2, 4): shapes that do not broadcast

    with pytest.raises(MindSporeGraphError, match="could not compile the gradient of Unsupported: For 'Mul'"):
        recomputed_ops(Unsupported(), x_of())
    assert ms.get_context("mode") == ms.PYNATIVE_MODE


# --------------------------------------------------------------------------- the parser

NODE = ("  %{n}(CNode_{n}) = PrimFunc_{op}(%1, %2) primitive_attrs: {{IsFeatureMapOutput: Bool(1)}} "
        "cnode_attrs: {{{attrs}}}\n"
        "      : (<Tensor[Float32], (2, 4)>) -> (<Tensor[Float32], (2, 4)>)\n"
        "      # Fullname with scope: ({scope})\n")


def graph_text(*nodes: str) -> str:
    return "# IR entry: @kernel_graph0\n\nsubgraph @kernel_graph0() {\n" + "".join(nodes) + "}\n"


def test_parser_reads_duplicated_nodes_and_ignores_what_it_does_not_know():
    text = graph_text(
        NODE.format(n=1, op="MatMul", attrs="recompute: Bool(1), some_future_attr: Str(x)",
                    scope="recompute_Default/forward-_Forward/net-Net/b1-Block/fc1-Dense/MatMul-op0"),
        NODE.format(n=2, op="MatMul", attrs="duplicated: Bool(1), another: (0, 1)",
                    scope="recompute_Default/forward-_Forward/net-Net/b1-Block/fc1-Dense/MatMul-op1"),
        NODE.format(n=3, op="ReLU", attrs="duplicated: Bool(1)",
                    scope="Default/forward-_Forward/net-Net/b2-Block/ReLU-op3"),
        NODE.format(n=4, op="Neg", attrs="duplicated: Bool(0)", scope="Default/forward-_Forward/net-Net/Neg-op0"),
        # without class names in scopes (reserve_class_name_in_scope=False), and an op of the cell itself
        NODE.format(n=5, op="Neg", attrs="duplicated: Bool(1)", scope="Default/forward/net/Neg-op1"),
        # cloned with a region: a backward op's tuple accessor (plumbing, left out) and a backward-scoped op
        NODE.format(n=6, op="TupleGetItem", attrs="duplicated: Bool(1)",
                    scope="Gradients/recompute_Default/forward-_Forward/net-Net/bn-BatchNorm2d/Grad_BatchNorm/"
                          "TupleGetItem-op0"),
        NODE.format(n=7, op="Mul", attrs="duplicated: Bool(1)",
                    scope="Gradients/recompute_Default/forward-_Forward/net-Net/bn-BatchNorm2d/Grad_BatchNorm/Mul-op2"),
    )
    assert parse_graph_ir(text) == [RecomputedOp("b1.fc1", "MatMul", "cell"), RecomputedOp("b2", "ReLU", "primitive"),
                                    RecomputedOp("", "Neg", "primitive"), RecomputedOp("bn", "Mul", "cell")]


def test_parser_reads_the_older_spelling_of_the_seed_tutorial():
    # MindSpore 1.6's graphs (the recompute tutorial, seed 004) spell the attribute "duplicated: true"
    text = graph_text(NODE.format(n=1, op="Conv2D", attrs="need_cse_after_recompute: true, duplicated: true",
                                  scope="recompute_Default/forward-_Forward/net-ResNet/layer1-SequentialCell/"
                                        "1-ResidualBlock/conv2-Conv2d/Conv2D-op7"),
                      NODE.format(n=2, op="Conv2D", attrs="duplicated: trueish", scope="Default/Conv2D-op8"))
    assert parse_graph_ir(text) == [RecomputedOp("layer1.1.conv2", "Conv2D", "cell")]


@pytest.mark.parametrize("text, problem", [
    ("nothing MindSpore would write\n", "0 operator lines and 0 scope lines"),
    (graph_text(NODE.format(n=1, op="ReLU", attrs="duplicated: Bool(1)", scope="x").replace("# Fullname", "# Name")),
     "has no '# Fullname with scope:' line"),
    (graph_text(NODE.format(n=1, op="ReLU", attrs="duplicated: Bool(1)", scope="recompute_/ReLU-op0")),
     "is not Default/<cell>-<Class>/.../<Op>-op<N>"),
    (graph_text(NODE.format(n=1, op="ReLU", attrs="duplicated: Bool(1)", scope="Default/net-Net/ReLU")),
     "is not Default/<cell>-<Class>/.../<Op>-op<N>"),
])
def test_parser_refuses_text_it_does_not_recognise(text, problem):
    with pytest.raises(IRFormatError, match="MindSpore 2.10") as err:
        parse_graph_ir(text, source="graph_build_0_0001.ir")
    assert problem in str(err.value) and "graph_build_0_0001.ir" in str(err.value)


def test_a_cell_run_as_python_is_an_error_not_an_empty_answer():
    text = graph_text(NODE.format(n=1, op="ReLU", attrs="", scope="Default/forward-_Forward/net-Net/ReLU-op0"),
                      NODE.format(n=2, op="X", attrs="", scope="Default/forward-_Forward/net-Net/model-SequentialCell/"
                                                              "PyExecute-op0").replace("PrimFunc_X", "PyExecute"))
    with pytest.raises(PythonFallbackError, match=r"1 part\(s\) run as Python \(PyExecute at Default/.*model-Seq"):
        parse_graph_ir(text)


def test_fact_typing_cast_makes_graph_mode_run_the_cell_as_python():
    # what the translator's typing.cast marker (mappings/markers.yaml) avoids: MONAI's checkpoint wrapper returns
    # cast(Tensor, checkpoint(...)), and GRAPH mode then compiles none of the network
    from typing import cast

    class Cast(nn.Cell):
        def __init__(self):
            super().__init__()
            self.b1 = Block()

        def construct(self, x):
            return cast(Tensor, ms.recompute(self.b1, x)) * 2

    with pytest.raises(PythonFallbackError):
        recomputed_ops(Cast(), x_of())


def test_a_folder_without_a_final_graph_is_an_error(tmp_path):
    (tmp_path / "01_type_inference_0001.ir").write_text("")
    with pytest.raises(IRFormatError, match=r"no final graph \(graph_build_\*\.ir\).*01_type_inference_0001.ir"):
        read_saved_graphs(tmp_path)


# --------------------------------------------------------------------------- MindSpore 2.10 facts it rests on

def test_fact_a_primitive_mark_acts_in_graph_mode_only():
    # PyNative: backward does not run a marked ReLU again (it runs ReLU once, as unmarked), while Cell.recompute()
    # runs the block again; compiled, the graph runs the marked ReLU again (test_a_primitive_mark_...).
    from recompat.compat.dispatch_log import OpsRun

    def relu_runs(mark):
        net = TwoBlocks()
        mark(net)
        grad = ms.value_and_grad(net, grad_position=0, weights=net.trainable_params())
        with OpsRun("mindspore") as ran:
            grad(x_of())
        return ran.counts["ReLU"]

    unmarked = relu_runs(lambda net: None)
    assert relu_runs(lambda net: net.b1.relu.recompute()) == unmarked == 2
    assert relu_runs(lambda net: net.b1.recompute()) == unmarked + 1
    marked = TwoBlocks()
    marked.b1.relu.recompute()
    assert recomputed_ops(marked, x_of()) == [RecomputedOp("b1", "ReLU", "primitive")]


def test_fact_a_primitive_mark_shadows_its_recompute_method():
    # Primitive.recompute() stores the mark as an attribute of the same name: undoing it by a second call fails.
    relu = ops.ReLU().recompute()
    assert relu.recompute is True
    with pytest.raises(TypeError, match="not callable"):
        relu.recompute(False)


def test_fact_cell_recompute_cannot_be_undone_and_a_bad_key_still_marks():
    with pytest.raises(TypeError):
        Block().recompute(False)
    block = Block()
    with pytest.raises(ValueError, match="'mode' is not recognized"):
        block.recompute(mode=False)
    net = TwoBlocks()
    with pytest.raises(ValueError):
        net.b1.recompute(mode=False)
    assert recomputed_ops(net, x_of()) == whole_block("b1"), "the rejected call marked the cell all the same"


def test_fact_a_mark_on_an_op_the_backward_needs_first_is_not_taken():
    # b2's ReLU output is needed as soon as backward starts (by fc2's weight gradient, the last op): recomputing
    # it saves nothing, and MindSpore leaves it out; one op more after the block and it is recomputed.
    net = TwoBlocks()
    net.b2.relu.recompute()
    assert recomputed_ops(net, x_of()) == []
    assert recomputed_ops(net, x_of(), scale=Tensor(2.0, ms.float32)) == [RecomputedOp("b2", "ReLU", "primitive")]


def test_fact_a_partial_of_mindspore_recompute_does_not_compile():
    # Hugging Face's self._gradient_checkpointing_func = functools.partial(checkpoint, ...), translated
    import functools

    class Partial(nn.Cell):
        def __init__(self, partial):
            super().__init__()
            self.b1 = Block()
            self.norm = nn.LayerNorm((4,), epsilon=1e-5)
            self.partial = partial
            self.recompute = functools.partial(ms.recompute, use_reentrant=False, early_stop=False)

        def construct(self, x):
            h = self.recompute(self.b1, x) if self.partial else ms.recompute(self.b1, x, use_reentrant=False,
                                                                                early_stop=False)
            return self.norm(h) * 2

    assert recomputed_ops(Partial(False), x_of()) == whole_block("b1")
    with pytest.raises(MindSporeGraphError, match="could not compile"):
        recomputed_ops(Partial(True), x_of())


class _Holder(nn.Cell):
    def __init__(self, child):
        super().__init__()
        self.child = child

    def construct(self, x):
        return self.child(x)


class _Loop(nn.Cell):
    def __init__(self):
        super().__init__()
        self.layers = nn.CellList([Block(), Block()])

    def construct(self, x):
        for layer in self.layers:
            x = layer(x)
        return x


class _Recomputed(nn.Cell):
    """mindspore.recompute(inner, x) inside construct, a layer after it (so backward does not need it first)."""

    def __init__(self, inner):
        super().__init__()
        self.inner = inner
        self.head = nn.Dense(4, 4)

    def construct(self, x):
        return self.head(ms.recompute(self.inner, x)) * 2


@pytest.mark.parametrize("make, recomputed", [
    (Block, True),
    (lambda: _Holder(_Holder(Block())), True),                    # nesting keeps the mark
    (lambda: nn.SequentialCell(Block(), Block()), False),          # a SequentialCell loses it
    (lambda: _Holder(nn.SequentialCell(Block())), False),          # ... anywhere inside
    (_Loop, False),                                                # and so does a loop over a CellList
], ids=["block", "nested", "sequentialcell", "sequentialcell-inside", "celllist-loop"])
def test_fact_the_function_form_loses_its_mark_on_cells_run_in_a_loop(make, recomputed):
    # GRAPH mode: mindspore.recompute(block, x) recomputes nothing of cells a loop runs (SequentialCell's
    # construct is one); Cell.recompute() on the same block does
    assert bool(recomputed_ops(_Recomputed(make()), x_of())) is recomputed
    marked = _Recomputed(make())
    marked.inner.recompute()
    assert recomputed_ops(marked, x_of()) != []
