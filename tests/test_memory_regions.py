"""Every region torch recomputes is recomputed on MindSpore too (compat.memory.MindSporeReruns, unrecomputed):
a lost mark fails by name however little memory it holds beside the rest of the model, a mark at another
granularity is no loss, and a region with no MindSpore cell to pair is not judged."""
from __future__ import annotations

import functools

import numpy as np
import pytest

from test_localise import DEPTH, ms_stack, torch_stack, x_batch
from test_memory_plain import WIDTH, _pair

pytestmark = pytest.mark.runtime


def _stack(form: str, recomputed=(0, 2)):
    """Three two-Dense blocks; those in ``recomputed`` marked (form "cell"), or called through mindspore.recompute
    (reentrant or not, bound in a partial as Hugging Face-style models bind it)."""
    import mindspore
    from mindspore import nn, ops

    call = {"function": functools.partial(mindspore.recompute, use_reentrant=False),
            "function-reentrant": mindspore.recompute}.get(form)

    class Block(nn.Cell):
        def __init__(self):
            super().__init__()
            self.a, self.b = nn.Dense(8, 8), nn.Dense(8, 8)

        def construct(self, x):
            return self.b(ops.tanh(self.a(x)))

    class Stack(nn.Cell):
        def __init__(self):
            super().__init__()
            self.layers = nn.CellList([Block() for _ in range(3)])
            if form == "cell":
                for i in recomputed:
                    self.layers[i].recompute()

        def construct(self, x):
            for i, layer in enumerate(self.layers):
                x = call(layer, x) if call is not None and i in recomputed else layer(x)
            return x

    return Stack()


@pytest.mark.parametrize("form", ["cell", "function", "function-reentrant"])
def test_mindsporereruns_sees_what_each_form_recomputes_in_backward(form):
    from recompat.compat import run_mindspore
    from recompat.compat.memory import MindSporeReruns

    model = _stack(form)
    reruns = MindSporeReruns(model)
    with reruns:
        run_mindspore(model, [np.ones((2, 8), np.float32)], forward_context=reruns.forward)
    # a marked cell's construct runs again, not its __call__: its children are what is seen
    expected = ["layers.0.a", "layers.0.b", "layers.2.a", "layers.2.b"] if form == "cell" else ["layers.0", "layers.2"]
    assert reruns.cells == expected
    assert not reruns._handles                                   # the hooks are gone after


def _heavy_head_pair(lost=()):
    """Three BatchNorm-GELU layers before four small checkpointed blocks: one block's bytes are little beside the
    head's, so a lost mark hides in the whole model's figures."""
    return _pair(lost, heads=3, blocks=4, passes=1)


def test_a_small_lost_region_fails_by_name_where_the_bytes_pass():
    from recompat.compat.compare import compare

    x = [np.random.default_rng(0).standard_normal((16, WIDTH)).astype(np.float32)]
    right = compare(*_heavy_head_pair(), x, localise=False)
    assert right.passed, str(right)
    assert right.row("regions recomputed").message == (
        "torch recomputes 4 regions in backward; MindSpore recomputes at, inside or around each of them")
    report = compare(*_heavy_head_pair(lost=(1,)), x, localise=False)
    assert report.row("bytes kept for backward").passed           # 1.16x its share: within the slack
    row = report.row("regions recomputed")
    assert not report.passed and not row.passed
    assert "recomputes nothing at, inside or around 1 of them (blocks.1): a recompute mark lost there" in row.message
    assert report.meta["memory"]["regions_not_recomputed"] == ["blocks.1"]


def test_the_stack_with_one_mark_lost_names_it_and_the_whole_stack_passes():
    from recompat.compat.compare import compare

    report = compare(torch_stack("non-reentrant"), ms_stack(recompute=range(DEPTH - 1)), x_batch(), localise=False)
    assert report.meta["memory"]["regions_not_recomputed"] == [f"layers.{DEPTH - 1}"]
    whole = compare(torch_stack("non-reentrant"), ms_stack(recompute=range(DEPTH)), x_batch(), localise=False)
    assert whole.passed and whole.row("regions recomputed").passed


def test_a_mark_around_or_inside_the_region_is_no_loss_and_an_unpaired_region_is_not_judged():
    from recompat.compat.memory import unrecomputed

    regions = ["blocks.0", "blocks.1", "act"]
    paired = {"blocks.0", "blocks.1", "blocks.0.fc", ""}        # "act": an nn.ReLU torch has, MindSpore's ops.relu
    assert unrecomputed(regions, {"blocks.0.fc", ""}, paired) == []              # finer, and around all
    assert unrecomputed(regions, {"blocks.0.fc"}, paired) == ["blocks.1"]
    assert unrecomputed(regions, set(), paired) == ["blocks.0", "blocks.1"]


def test_a_region_is_judged_by_the_modules_inside_it_and_one_with_none_is_counted_not_judged():
    from recompat.compat.compare import Regions, regions_row
    from recompat.compat.memory import judged_regions, unrecomputed

    # checkpoint_wrapper: torch reruns the wrapped module, which has no MindSpore cell; its layers do
    regions = ["blocks.0._checkpoint_wrapped_module", "blocks.1._checkpoint_wrapped_module"]
    paired = {"", "blocks", "blocks.0", "blocks.1", "blocks.0._checkpoint_wrapped_module.fc",
              "blocks.1._checkpoint_wrapped_module.fc"}
    assert judged_regions(regions, paired) == regions
    assert unrecomputed(regions, {"blocks.0"}, paired) == ["blocks.1._checkpoint_wrapped_module"]
    row = regions_row(Regions(regions + ["act"], unrecomputed(regions + ["act"], {"blocks.0", "blocks.1"}, paired), 1))
    assert row.passed and row.message == (
        "torch recomputes 3 regions in backward (1 with no MindSpore cell to pair, not judged: a module the port "
        "calls as a function); MindSpore recomputes at, inside or around each judged one")
