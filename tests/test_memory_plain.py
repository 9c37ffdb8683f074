"""What each model keeps for backward without its checkpointing (compat.memory.checkpointing_off), measured by
run_pair beside the run with it: every torch form and every MindSpore mark runs as a plain call while it is
active, and is back after; compare()'s memory row weighs the share each side keeps, so a correct port whose
MindSpore ops keep more passes, and a lost mark still fails."""
from __future__ import annotations

import functools

import numpy as np
import pytest

pytestmark = pytest.mark.runtime
WIDTH, BLOCKS = 32, 6


def _torch_kept(run) -> int:
    from recompat.compat.memory import SavedTensors

    counter = SavedTensors("torch")
    with counter:
        out = run()
    out.sum().backward()
    return counter.bytes


@pytest.mark.parametrize("form", ["reentrant", "non-reentrant", "checkpoint_sequential", "checkpoint_wrapper"])
def test_every_torch_form_runs_plain_while_checkpointing_is_off_and_is_back_after(form):
    import torch
    from torch.distributed.algorithms._checkpoint.checkpoint_wrapper import checkpoint_wrapper
    from torch.utils.checkpoint import checkpoint, checkpoint_sequential

    from recompat.compat.memory import checkpointing_off

    torch.manual_seed(0)
    seq = torch.nn.Sequential(*[torch.nn.Sequential(torch.nn.Linear(16, 16), torch.nn.Tanh()) for _ in range(4)])
    x = torch.randn(8, 16, requires_grad=True)
    runs = {
        "reentrant": lambda: functools.reduce(lambda h, m: checkpoint(m, h, use_reentrant=True), seq, x),
        "non-reentrant": lambda: functools.reduce(lambda h, m: checkpoint(m, h, use_reentrant=False), seq, x),
        "checkpoint_sequential": lambda: checkpoint_sequential(seq, 2, x, use_reentrant=False),
        "checkpoint_wrapper": lambda: functools.reduce(lambda h, m: checkpoint_wrapper(m)(h), seq, x),
    }
    plain, checkpointed = _torch_kept(lambda: seq(x)), _torch_kept(runs[form])
    assert checkpointed < plain
    with checkpointing_off():
        assert _torch_kept(runs[form]) == plain
    assert _torch_kept(runs[form]) == checkpointed


def _ms_model(marks: str):
    from mindspore import nn, ops
    import mindspore

    class Block(nn.Cell):
        def __init__(self):
            super().__init__()
            self.a, self.b = nn.Dense(WIDTH, WIDTH), nn.Dense(WIDTH, WIDTH)

        def construct(self, x):
            return self.b(ops.tanh(self.a(x)))

    # the function form bound before the run, as a Hugging Face-style model binds it (a partial)
    forms = {"function": functools.partial(mindspore.recompute, use_reentrant=False),
             "function-reentrant": mindspore.recompute, "none": None, "cell": None}

    class Stack(nn.Cell):
        def __init__(self):
            super().__init__()
            self.layers = nn.CellList([Block() for _ in range(3)])
            self.recompute_function = forms[marks]
            if marks == "cell":
                for layer in self.layers:
                    layer.recompute()

        def construct(self, x):
            for layer in self.layers:
                x = self.recompute_function(layer, x) if self.recompute_function else layer(x)
            return x

    return Stack()


@pytest.mark.parametrize("marks", ["cell", "function", "function-reentrant"])
def test_every_mindspore_mark_runs_plain_while_checkpointing_is_off_and_is_back_after(marks):
    from recompat.compat import run_mindspore
    from recompat.compat.memory import SavedTensors, checkpointing_off, mindspore_marks

    x = np.ones((8, WIDTH), np.float32)
    model = _ms_model(marks)

    def kept(cell):
        counter = SavedTensors("mindspore")
        run_mindspore(cell, [x], forward_context=lambda: counter)
        return counter.bytes

    plain, recomputed = kept(_ms_model("none")), kept(model)
    assert recomputed < plain
    with checkpointing_off(model):
        assert kept(model) == plain
    assert kept(model) == recomputed
    assert mindspore_marks(model) == (["layers.0", "layers.1", "layers.2"] if marks == "cell" else [])


def _pair(lost=(), heads: int = 2, blocks: int = BLOCKS, passes: int = 2):
    """``heads`` BatchNorm-GELU layers (MindSpore's ops keep more for backward there) and ``blocks`` checkpointed
    blocks, each applying its Dense and a tanh ``passes`` times; the MindSpore twin marks each block but those in
    ``lost``."""
    import torch
    from mindspore import nn, ops
    from torch.utils.checkpoint import checkpoint

    class TorchBlock(torch.nn.Module):
        def __init__(self):
            super().__init__()
            self.fc = torch.nn.Linear(WIDTH, WIDTH)

        def forward(self, x):
            for _ in range(passes):
                x = torch.tanh(self.fc(x))
            return x

    class TorchNet(torch.nn.Module):
        def __init__(self):
            super().__init__()
            self.head = torch.nn.Sequential(*[m for _ in range(heads) for m in (
                torch.nn.Linear(WIDTH, WIDTH), torch.nn.BatchNorm1d(WIDTH), torch.nn.GELU())])
            self.blocks = torch.nn.ModuleList([TorchBlock() for _ in range(blocks)])

        def forward(self, x):
            x = self.head(x)
            for block in self.blocks:
                x = checkpoint(block, x, use_reentrant=False)
            return x

    class MsBlock(nn.Cell):
        def __init__(self):
            super().__init__()
            self.fc = nn.Dense(WIDTH, WIDTH)

        def construct(self, x):
            for _ in range(passes):
                x = ops.tanh(self.fc(x))
            return x

    class MsNet(nn.Cell):
        def __init__(self):
            super().__init__()
            self.head = nn.SequentialCell(*[m for _ in range(heads) for m in (
                nn.Dense(WIDTH, WIDTH), nn.BatchNorm1d(WIDTH, momentum=0.9), nn.GELU(approximate=False))])
            self.blocks = nn.CellList([MsBlock() for _ in range(blocks)])
            for i, block in enumerate(self.blocks):
                if i not in lost:
                    block.recompute()

        def construct(self, x):
            x = self.head(x)
            for block in self.blocks:
                x = block(x)
            return x

    torch.manual_seed(0)
    net = MsNet()
    net.set_train(True)
    return TorchNet(), net


def test_a_correct_port_whose_ops_keep_more_passes_by_the_share_it_keeps():
    from recompat.compat.compare import MEMORY_SLACK, compare

    x = np.random.default_rng(0).standard_normal((16, WIDTH)).astype(np.float32)
    report = compare(*_pair(), [x])
    assert report.passed, str(report)
    memory = report.meta["memory"]
    plain = memory["without_recompute"]
    assert memory["mindspore"] > MEMORY_SLACK * memory["torch"]         # the bytes alone would fail it
    assert memory["mindspore"] / plain["mindspore"] <= MEMORY_SLACK * memory["torch"] / plain["torch"]
    assert plain["torch"] > memory["torch"] and plain["mindspore"] > memory["mindspore"]
    assert "recompute saves 53% on torch, 48% on MindSpore" in report.row("bytes kept for backward").message


def test_one_lost_mark_of_six_still_fails_by_either_measure():
    from recompat.compat.compare import compare

    x = np.random.default_rng(0).standard_normal((16, WIDTH)).astype(np.float32)
    report = compare(*_pair(lost=(1,)), [x])
    row = report.row("bytes kept for backward")
    assert not report.passed and not row.passed
    assert "1.43x torch's bytes, 1.28x its share (at most 1.2x by either)" in row.message


def test_a_model_that_does_not_run_without_its_checkpointing_is_judged_by_the_bytes_and_says_why(monkeypatch):
    import importlib

    compare_module = importlib.import_module("recompat.compat.compare")

    def refuses(*_args, **_kwargs):
        raise RuntimeError("this model needs its checkpoint")

    monkeypatch.setattr(compare_module, "checkpointing_off", refuses)
    x = np.random.default_rng(0).standard_normal((16, WIDTH)).astype(np.float32)
    report = compare_module.compare(*_pair(), [x], localise=False)
    row = report.row("bytes kept for backward")
    assert not row.passed and "at most 1.2x)" in row.message
    assert ("without recompute not measured: RuntimeError: this model needs its checkpoint"
            in report.meta["memory"]["why"])
