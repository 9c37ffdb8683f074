"""compare() says where a failing pair first parts (compat.localise): planted bugs with a known first divergent
module, a correct twin that names none, checkpointed and recomputed stacks, shared modules called twice."""
from __future__ import annotations

import numpy as np
import pytest

from recompat.compat.compare import compare
from recompat.compat.localise import pair_paths, record_name, split_name

pytestmark = pytest.mark.runtime
WIDTH, DEPTH = 32, 12


def torch_stack(checkpoint: str | None = None, batchnorm: bool = False):
    """DEPTH residual blocks (Linear, LayerNorm, in-place ReLU); each block checkpointed when asked."""
    import torch
    from torch.utils.checkpoint import checkpoint as ckpt

    class Block(torch.nn.Module):
        def __init__(self):
            super().__init__()
            self.fc = torch.nn.Linear(WIDTH, WIDTH)
            self.norm = torch.nn.BatchNorm1d(WIDTH) if batchnorm else torch.nn.LayerNorm(WIDTH)
            self.act = torch.nn.ReLU(inplace=True)

        def forward(self, x):
            return x + self.act(self.norm(self.fc(x)))

    class Stack(torch.nn.Module):
        def __init__(self):
            super().__init__()
            self.layers = torch.nn.ModuleList([Block() for _ in range(DEPTH)])

        def forward(self, x):
            for layer in self.layers:
                x = ckpt(layer, x, use_reentrant=checkpoint == "reentrant") if checkpoint else layer(x)
            return x

    torch.manual_seed(0)
    return Stack()


def ms_stack(eps=None, transposed=None, recompute=(), batchnorm: bool = False, doubled_grad=None):
    """The MindSpore twin, with a planted bug where asked: ``eps`` {block: LayerNorm eps}, ``transposed``: the block
    whose Linear multiplies by W instead of W.T, ``doubled_grad``: the block whose activation's backward doubles."""
    import mindspore as ms
    from mindspore import nn, ops

    ms.set_context(mode=ms.PYNATIVE_MODE)

    class Linear(nn.Cell):
        def __init__(self, transposed):
            super().__init__()
            self.weight = ms.Parameter(ops.zeros((WIDTH, WIDTH), ms.float32))
            self.bias = ms.Parameter(ops.zeros((WIDTH,), ms.float32))
            self.transposed = transposed

        def construct(self, x):
            return ops.matmul(x, self.weight if self.transposed else self.weight.T) + self.bias

    class DoubledGradient(nn.Cell):      # a cell with its own bprop calls no hook: the cell calling it is judged
        def construct(self, x):
            return ops.relu(x)

        def bprop(self, x, out, dout):
            return (2 * dout * (x > 0).astype(dout.dtype),)

    class DoubledReLU(nn.Cell):
        def __init__(self):
            super().__init__()
            self.relu = DoubledGradient()

        def construct(self, x):
            return self.relu(x)

    class Block(nn.Cell):
        def __init__(self, i):
            super().__init__()
            self.fc = Linear(i == transposed)
            self.norm = (nn.BatchNorm1d(WIDTH) if batchnorm else
                         nn.LayerNorm((WIDTH,), epsilon=(eps or {}).get(i, 1e-5)))
            self.act = DoubledReLU() if i == doubled_grad else nn.ReLU()

        def construct(self, x):
            return x + self.act(self.norm(self.fc(x)))

    class Stack(nn.Cell):
        def __init__(self):
            super().__init__()
            self.layers = nn.CellList([Block(i) for i in range(DEPTH)])
            for i in recompute:
                self.layers[i].recompute()

        def construct(self, x):
            for layer in self.layers:
                x = layer(x)
            return x

    return Stack()


def x_batch():
    return [np.random.default_rng(0).standard_normal((4, WIDTH)).astype(np.float32)]


@pytest.mark.parametrize("checkpoint", [None, "non-reentrant"])
def test_a_wrong_eps_in_layer_7_of_12_is_named(checkpoint):
    report = compare(torch_stack(checkpoint), ms_stack(eps={6: 1e-2}), x_batch(), strict=False)
    assert not report.passed
    found = report.meta["localisation"]
    assert found["forward"]["torch_path"] == found["forward"]["mindspore_path"] == "layers.6.norm"
    assert (found["forward"]["torch_class"], found["forward"]["mindspore_class"]) == ("LayerNorm", "LayerNorm")
    assert found["forward"]["max_abs_err"] > 1e-4
    assert "first divergence, forward: layers.6.norm [LayerNorm / LayerNorm]: output differs" in str(report)
    # going back, the first failing input gradient lies downstream of the forward divergence: said as such
    assert found["backward"]["after_forward"] is True


@pytest.mark.parametrize("checkpoint", [None, "non-reentrant", "reentrant"])
def test_a_transposed_weight_in_a_middle_block_is_named(checkpoint):
    report = compare(torch_stack(checkpoint), ms_stack(transposed=5, recompute=range(DEPTH)), x_batch())
    found = report.meta["localisation"]["forward"]
    assert (found["torch_path"], found["torch_class"], found["mindspore_class"]) == ("layers.5.fc", "Linear", "Linear")


def test_a_bug_in_the_backward_only_is_named_going_back():
    report = compare(torch_stack(), ms_stack(doubled_grad=8), x_batch())
    found = report.meta["localisation"]
    assert found["forward"] is None
    assert found["backward"]["torch_path"] == "layers.8.act"
    assert found["backward"]["after_forward"] is False
    assert "first divergence, forward: none" in str(report)


@pytest.mark.parametrize("checkpoint", [None, "non-reentrant", "reentrant"])
def test_a_correct_twin_names_none_even_when_asked(checkpoint):
    marks = range(DEPTH) if checkpoint else range(0, DEPTH, 2)     # every block torch checkpoints, or some
    report = compare(torch_stack(checkpoint), ms_stack(recompute=marks), x_batch(), localise=True)
    assert report.passed, str(report)
    found = report.meta["localisation"]
    assert found["forward"] is None and found["backward"] is None
    assert found["modules"] == 1 + DEPTH * 4          # the model, and each block with its three layers
    assert found["judged"] > found["modules"]           # outputs and input gradients


def test_a_passing_pair_is_not_run_again():
    model = torch_stack()
    calls = []
    model.layers[0].register_forward_hook(lambda *a: calls.append(1))   # deepcopy takes it to the float64 copy

    def runs(localise):
        calls.clear()
        report = compare(model, ms_stack(), x_batch(), localise=localise)
        assert report.passed
        return len(calls), "localisation" in report.meta

    plain = runs(False)
    assert runs("auto") == plain == (plain[0], False)
    assert runs(True) == (2 * plain[0], True)


def test_the_rerun_starts_from_the_state_the_failing_run_started_from():
    """A run moves BatchNorm's statistics: the rerun must see the ones the failing run saw, and leave the models as
    one run leaves them."""
    import torch

    plain, localised = torch_stack(batchnorm=True).train(), torch_stack(batchnorm=True).train()
    ms_plain, ms_localised = ms_stack(batchnorm=True, transposed=3), ms_stack(batchnorm=True, transposed=3)
    ms_plain.set_train(True)
    ms_localised.set_train(True)
    compare(plain, ms_plain, x_batch(), localise=False)
    report = compare(localised, ms_localised, x_batch())
    assert report.meta["localisation"]["forward"]["torch_path"] == "layers.3.fc"
    for (name, a), (_n, b) in zip(plain.state_dict().items(), localised.state_dict().items()):
        assert torch.equal(a, b), name
    for a, b in zip(ms_plain.get_parameters(), ms_localised.get_parameters()):
        np.testing.assert_array_equal(a.asnumpy(), b.asnumpy(), err_msg=a.name)


def test_a_module_called_twice_pairs_call_with_call():
    """Each call of a shared module is its own record, its gradient the one of that call: a correct twin agrees on
    both calls, going back too (the calls' input gradients differ, so a swap would fail)."""
    import mindspore as ms
    import torch
    from mindspore import nn

    class TorchShared(torch.nn.Module):
        def __init__(self):
            super().__init__()
            self.fc = torch.nn.Linear(WIDTH, WIDTH)
            self.norm = torch.nn.LayerNorm(WIDTH)

        def forward(self, x):
            return self.fc(torch.tanh(self.norm(self.fc(x))))

    class MsShared(nn.Cell):
        def __init__(self, eps=1e-5):
            super().__init__()
            self.fc = nn.Dense(WIDTH, WIDTH)
            self.norm = nn.LayerNorm((WIDTH,), epsilon=eps)

        def construct(self, x):
            return self.fc(ms.ops.tanh(self.norm(self.fc(x))))

    torch.manual_seed(0)
    good = compare(TorchShared(), MsShared(), x_batch(), localise=True)
    assert good.passed and good.meta["localisation"]["forward"] is None
    assert good.meta["localisation"]["backward"] is None
    bad = compare(TorchShared(), MsShared(eps=0.5), x_batch(), strict=False)
    found = bad.meta["localisation"]["forward"]
    assert found["torch_path"] == "norm"
    # going back, fc's second call is reached first: its input gradient (W.T times the cotangent) agrees
    assert bad.meta["localisation"]["backward"]["torch_path"] == "norm"


def test_a_graph_mode_pair_is_localised_in_pynative_and_says_so():
    report = compare(torch_stack(), ms_stack(transposed=2), x_batch(), ms_mode="graph")
    found = report.meta["localisation"]
    assert found["forward"]["torch_path"] == "layers.2.fc"
    assert "PyNative" in found["note"] and "PyNative" in str(report)


def test_a_rerun_that_raises_leaves_the_verdict_and_says_why(monkeypatch):
    import sys

    compare_module = sys.modules["recompat.compat.compare"]

    def broken(*args, **kwargs):
        raise RuntimeError("hooks refused")

    monkeypatch.setattr(compare_module, "localise_pair", broken)
    report = compare(torch_stack(), ms_stack(transposed=2), x_batch())
    assert not report.passed
    assert "localisation did not run" in report.meta["localisation"]["skipped"]
    assert "hooks refused" in str(report)


def test_localise_must_be_auto_true_or_false():
    with pytest.raises(ValueError, match="localise must be"):
        compare(torch_stack(), ms_stack(), x_batch(), localise="always")


def test_paths_pair_by_name_and_by_the_parameters_the_transfer_paired():
    torch_paths = {"", "blocks", "blocks.0", "blocks.0.attn", "blocks.0.attn.qkv"}
    ms_cells = {"": 0, "blocks": 0, "blocks.0": 0, "blocks.0.attention": 0, "blocks.0.attention.qkv": 0,
                "blocks.0._recompute_cell": 0}
    name_map = {"blocks.0.attn.qkv.weight": "blocks.0.attention.qkv.weight"}
    assert pair_paths(torch_paths, ms_cells, name_map) == {
        "": "", "blocks": "blocks", "blocks.0": "blocks.0", "blocks.0.attention.qkv": "blocks.0.attn.qkv"}


def test_record_names_round_trip():
    assert split_name(record_name("layers.6.norm", 1, "input[0].grad")) == ("layers.6.norm", 1, "input[0].grad")
    assert split_name(record_name("", 0, "output[1].key")) == ("", 0, "output[1].key")


def test_a_recompute_mark_lost_on_one_block_is_named_by_the_memory_it_keeps():
    lost = [i for i in range(DEPTH) if i != 4]
    report = compare(torch_stack("non-reentrant"), ms_stack(recompute=lost), x_batch(), memory=True)
    assert not report.row("bytes kept for backward").passed
    found = report.meta["localisation"]
    assert found["forward"] is None and found["backward"] is None        # the numbers agree: only memory differs
    assert found["memory"]["torch_path"] == found["memory"]["mindspore_path"] == "layers.4"
    assert found["memory"]["mindspore_bytes"] > found["memory"]["torch_bytes"]
    assert "most beyond torch's: layers.4 [Block / Block]" in str(report)


def test_every_mark_kept_keeps_the_memory_and_names_nothing():
    report = compare(torch_stack("non-reentrant"), ms_stack(recompute=range(DEPTH)), x_batch(), memory=True,
                     localise=True)
    assert report.passed, str(report)
    assert report.meta["localisation"]["memory"] is None      # asked only where the memory row fails


def test_the_html_report_draws_the_module_tree_with_the_first_divergence_marked():
    import json
    import re

    from recompat.reports import html

    report = compare(torch_stack(), ms_stack(transposed=5), x_batch())
    doc = {"format": 1, "kind": "recompat-suite", "meta": {}, "totals": {}, "results": [
        {"id": "stack-cross", "pair": "stack", "check": "cross", "variant": "plain", "device": "cpu",
         "ms_mode": "pynative", "status": "failed", "message": report.summary(), "figures": {}, "seconds": 1.0,
         "report": json.loads(report.to_json())}]}       # through JSON, as `recompat report` reads it
    page = html.render(doc)
    marked = re.findall(r'<tr class="first"><td class="mono" style="padding-left: (\d)em">([^ <]+) '
                        r'<strong>&larr; first divergence \((\w+)\)', page)
    assert ("3", "layers.5.fc", "forward") in marked
    assert "first divergence, forward: layers.5.fc [Linear / Linear]" in page
    tree = page[page.index('<table class="tree">'):]
    assert tree.index(">layers.4.fc<") < tree.index(">layers.5.fc ") < tree.index(">layers.6.fc<")
    assert 'layers.4.fc</td><td class="small">Linear / Linear</td><td><span class="badge s-agree">' in tree


def _torch_head():
    import torch

    torch.manual_seed(0)
    return torch.nn.Sequential(torch.nn.Linear(WIDTH, WIDTH), torch.nn.Tanh(), torch.nn.Linear(WIDTH, 4))


def _ms_head(calls_last: bool):
    """The twin; ``calls_last`` False multiplies by the last Dense's weight without calling it (its bias left out)."""
    from mindspore import nn, ops

    class Head(nn.Cell):
        def __init__(self):
            super().__init__()
            self.head = nn.SequentialCell(nn.Dense(WIDTH, WIDTH), nn.Tanh(), nn.Dense(WIDTH, 4))

        def construct(self, x):
            h = self.head[1](self.head[0](x))
            return self.head[2](h) if calls_last else ops.matmul(h, self.head[2].weight.T)

    return Head()


def test_a_layer_whose_weight_is_used_without_calling_it_is_named_never_called():
    import torch

    def torch_model():
        model = torch.nn.Module()
        model.head = _torch_head()
        model.forward = model.head.forward
        return model

    x = [np.random.default_rng(0).standard_normal((8, WIDTH)).astype(np.float32)]
    report = compare(torch_model(), _ms_head(calls_last=False), x)
    found = report.meta["localisation"]
    assert not report.passed and found["uncalled"] == ["head.2"]
    assert "never called by MindSpore: head.2 -- torch calls it" in str(report)
    right = compare(torch_model(), _ms_head(calls_last=True), x, localise=True)
    assert right.passed and right.meta["localisation"]["uncalled"] == []
