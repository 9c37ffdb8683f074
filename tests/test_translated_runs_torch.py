"""MindSpore -> torch translations run, recompute, and give the gradients of the unmarked model.

The sources are MindSpore model files. recompat translates their recompute sites; the rest of the file
(nn.Cell, construct, nn.Dense, ...) is whole-model translation's job, so here a fixed table of plain
textual substitutions (LAYERS) turns it into torch before running. The same substitutions applied to the
source with its recompute sites removed by hand give the reference: the same model, nothing recomputed.
"""
from __future__ import annotations

import textwrap
import types

import pytest
import torch
import torch.utils.checkpoint

from recompat.translator.translate import translate_bytes

LAYERS = {                       # MindSpore text -> torch text, outside the recompute sites
    "from mindspore import nn, ops": "from torch import nn",
    "from mindspore import nn": "from torch import nn",
    "nn.Cell": "nn.Module",
    "def construct(": "def forward(",
    "nn.Dense(": "nn.Linear(",
    "ops.ReLU()": "nn.ReLU()",
    "nn.SequentialCell(": "nn.Sequential(*",
    "ops.relu(": "torch.relu(",
}


def as_torch(text: str) -> str:
    for old, new in LAYERS.items():
        text = text.replace(old, new)
    return "import torch\n" + text


def load(text: str) -> types.ModuleType:
    module = types.ModuleType("translated")
    exec(compile(text, "translated.py", "exec"), module.__dict__)
    return module


def translate(source: str) -> str:
    result = translate_bytes(source.encode(), "model.py", to="torch")
    assert result.changed and all(s.status != "manual" for s in result.sites), result.sites
    return result.new_data.decode()


MODEL = textwrap.dedent("""\
    import mindspore
    from mindspore import nn, ops


    class Block(nn.Cell):
        def __init__(self):
            super().__init__()
            self.dense = nn.Dense(8, 8)

        def construct(self, x, scale=1.0):
            return ops.relu(self.dense(x)) * scale


    class Net(nn.Cell):
        def __init__(self):
            super().__init__()
            self.fc1 = nn.Dense(8, 8)
            self.fc2 = nn.Dense(8, 8)
            self.fc2.recompute()
            self.relu2 = ops.ReLU()
            self.relu2.recompute()
            self.blk = Block()
            self.kw = Block()
            self.out = Block()
            self.tail = self._make_layer(3)

        def _make_layer(self, n):
            layers = []
            for _ in range(n):
                layer = Block()
                layer.recompute()
                layers.append(layer)
            return nn.SequentialCell(layers)

        def construct(self, x):
            x = self.fc1(x)
            x = self.relu2(self.fc2(x))
            x = mindspore.recompute(self.blk, x)
            x = mindspore.recompute(self.kw, x, scale=0.5)
            x = mindspore.recompute(self.out, x, output_recompute=True)
            return self.tail(x)
""")

PLAIN = (MODEL.replace("        self.fc2.recompute()\n", "")
         .replace("        self.relu2.recompute()\n", "")
         .replace("            layer.recompute()\n", "")
         .replace("mindspore.recompute(self.blk, x)", "self.blk(x)")
         .replace("mindspore.recompute(self.kw, x, scale=0.5)", "self.kw(x, scale=0.5)")
         .replace("mindspore.recompute(self.out, x, output_recompute=True)", "self.out(x)"))


@pytest.fixture(scope="module")
def nets():
    torch.manual_seed(0)
    translated = load(as_torch(translate(MODEL))).Net()
    plain = load(as_torch(PLAIN)).Net()
    plain.load_state_dict(translated.state_dict())
    return translated, plain


def _step(net, x):
    net.zero_grad()
    x = x.clone().requires_grad_(True)
    loss = (net(x) * torch.linspace(-1, 1, 8)).sum()
    loss.backward()
    return loss.detach(), x.grad, {n: p.grad.clone() for n, p in net.named_parameters()}


def test_the_plain_twin_really_has_no_recompute():
    assert "recompute" not in PLAIN and "checkpoint" not in as_torch(PLAIN)


def test_parameter_names_are_those_of_the_unmarked_model(nets):
    translated, plain = nets
    assert list(translated.state_dict()) == list(plain.state_dict())
    assert [n for n, _ in translated.named_parameters()] == [n for n, _ in plain.named_parameters()]


def test_outputs_and_gradients_equal_the_unmarked_model(nets):
    translated, plain = nets
    x = torch.randn(4, 8)
    got, want = _step(translated, x), _step(plain, x)
    torch.testing.assert_close(got[0], want[0])
    torch.testing.assert_close(got[1], want[1])
    assert got[2].keys() == want[2].keys()
    for name in want[2]:
        torch.testing.assert_close(got[2][name], want[2][name], msg=name)


@pytest.mark.parametrize("path, runs", [
    ("fc2", 2),          # a mark whose calls are in sight: checkpoint(self.fc2, ...) reruns the module's call
    ("relu2", 1),        # an operator mark: dropped (RC222), torch saves nothing by rerunning one operator
    ("blk", 2),          # the function form
    ("kw", 2),           # the function form with a keyword for the block (non-reentrant)
    ("out", 2),          # output_recompute=True (non-reentrant)
    ("tail.0.dense", 2),  # a block marked in place (composable): its inside runs again in backward
    ("fc1", 1),          # not marked: runs once
])
def test_marked_parts_run_again_in_backward(nets, path, runs):
    """Early stop (on by default in the non-reentrant form) ends a recomputation as soon as the tensors backward
    needs are back, which can be before the last module's hook; switched off here, every rerun shows."""
    translated, _ = nets
    module = translated.get_submodule(path)
    calls = []
    handle = module.register_forward_hook(lambda *a: calls.append(torch.is_grad_enabled()))
    try:
        with torch.utils.checkpoint.set_checkpoint_early_stop(False):
            _step(translated, torch.randn(4, 8))
    finally:
        handle.remove()
    assert len(calls) == runs, (path, calls)


def test_a_block_marked_in_place_keeps_one_hook_call_as_on_mindspore(nets):
    """Composable checkpoint reruns the block's forward, not its __call__: a hook on the marked block itself
    fires once per step, as on MindSpore (whose rerun calls construct directly)."""
    translated, _ = nets
    calls = []
    handle = translated.tail[0].register_forward_hook(lambda *a: calls.append(1))
    try:
        _step(translated, torch.randn(4, 8))
    finally:
        handle.remove()
    assert calls == [1]


def test_reentrant_checkpoint_drops_parameter_gradients_without_an_input_gradient():
    """What RC201 warns about: torch's reentrant form with no input requiring grad gives the block's parameters
    no gradient (MindSpore's reentrant recompute gives them); the non-reentrant form does."""
    from torch.utils.checkpoint import checkpoint

    block = torch.nn.Linear(3, 3)
    x = torch.randn(2, 3)
    with pytest.warns(UserWarning, match="requires_grad"):
        y = checkpoint(block, x, use_reentrant=True)
    assert not y.requires_grad
    checkpoint(block, x, use_reentrant=False).sum().backward()
    assert block.weight.grad is not None
