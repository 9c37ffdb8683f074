"""compare() judges the user's own weight conversion wherever they brought one (a model already holding torch's
values, a .ckpt, a torch file converted as `recompat weights` does), and copies torch's in only for two freshly
built models; the report says which weights were judged."""
from __future__ import annotations

import mindspore as ms
import numpy as np
import pytest
import torch
from mindspore import nn as mnn
from mindspore import ops

from recompat.compat.compare import compare
from recompat.compat.user_weights import choose_weights
from recompat.compat.weight_files import WeightFileError

pytestmark = pytest.mark.runtime

# torch's names -> MindSpore's, as a user's hand-written conversion spells them
MS_NAMES = {"fc.weight": "fc.weight", "fc.bias": "fc.bias", "bn.weight": "bn.gamma", "bn.bias": "bn.beta",
            "bn.running_mean": "bn.moving_mean", "bn.running_var": "bn.moving_variance"}


@pytest.fixture(autouse=True)
def _pynative():
    ms.set_context(mode=ms.PYNATIVE_MODE)
    torch.manual_seed(0)


class TorchNet(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.fc = torch.nn.Linear(6, 8)
        self.bn = torch.nn.BatchNorm1d(8)

    def forward(self, x):
        return torch.tanh(self.bn(self.fc(x)))


class MsNet(mnn.Cell):
    def __init__(self):
        super().__init__()
        self.fc = mnn.Dense(6, 8)
        self.bn = mnn.BatchNorm1d(8, momentum=0.9)

    def construct(self, x):
        return ops.tanh(self.bn(self.fc(x)))


def trained_torch() -> TorchNet:
    """A torch model in evaluation mode whose statistics are not BatchNorm's initial zeros and ones."""
    t = TorchNet().eval()
    with torch.no_grad():
        t.bn.running_mean.uniform_(-1.0, 1.0)
        t.bn.running_var.uniform_(0.5, 2.0)
    return t


def converted(t: TorchNet, *, skip=()) -> MsNet:
    """The user's own conversion, written by hand; `skip`: torch names it forgets."""
    m = MsNet()
    m.set_train(False)
    params = m.parameters_dict()
    for name, value in {**dict(t.named_parameters()), **dict(t.named_buffers())}.items():
        if name in MS_NAMES and name not in skip:
            params[MS_NAMES[name]].set_data(ms.Tensor(value.detach().numpy()))
    return m


def batch():
    return [np.random.default_rng(1).standard_normal((16, 6)).astype(np.float32)]


def test_two_freshly_built_models_get_torchs_weights_and_the_report_says_so():
    m = MsNet()
    m.set_train(False)
    report = compare(trained_torch(), m, batch())
    assert report.passed, str(report)
    assert report.meta["weights"]["run_with"] == "torch"
    assert not [r for r in report.rows if r.kind == "weight"]
    assert "weights judged: torch's, copied into the MindSpore model: it held torch's values for 0 of 2" in str(report)


def test_a_model_the_user_converted_is_judged_as_held_and_passes():
    t = trained_torch()
    report = compare(t, converted(t), batch())
    assert report.passed, str(report)
    assert report.meta["weights"]["run_with"] == "as-is"
    assert {r.name for r in report.rows if r.kind == "weight"} == set(MS_NAMES)
    assert "the MindSpore model's own, as the user converted them: it already held torch's values for 2 of 2" \
        in str(report)


@pytest.mark.parametrize("forgotten", ["fc.bias", "bn.running_var"])
def test_a_faulty_conversion_fails_with_the_users_weights_and_passes_with_torchs_copied_in(forgotten):
    t = trained_torch()
    report = compare(t, converted(t, skip={forgotten}), batch())
    assert not report.passed
    assert [r.name for r in report.failures if r.kind == "weight"] == [forgotten]
    assert "before the run" in report.row(forgotten).message
    assert "the MindSpore model's own" in str(report)
    copied = compare(t, converted(t, skip={forgotten}), batch(), weights="torch")
    assert copied.passed, str(copied)
    assert "weights judged: torch's, copied into the MindSpore model (weights='torch')" in str(copied)


def test_a_second_compare_of_the_same_models_in_training_mode_does_not_false_alarm():
    # the first run copies torch's weights and moves both sides' statistics by their own round-off; the second
    # finds the weights held alike and judges them as held: the statistics within round-off, not bit for bit
    t, m = TorchNet().train(), MsNet()
    m.set_train(True)
    assert compare(t, m, batch()).meta["weights"]["run_with"] == "torch"
    again = compare(t, m, batch())
    assert again.meta["weights"]["run_with"] == "as-is"
    assert again.passed, str(again)


def test_a_parameter_initialised_alike_on_both_sides_does_not_make_a_fresh_pair_look_converted():
    class TorchPos(TorchNet):
        def __init__(self):
            super().__init__()
            self.scale = torch.nn.Parameter(torch.linspace(0.5, 1.5, 8))   # deterministic: alike on both sides

        def forward(self, x):
            return super().forward(x) * self.scale

    class MsPos(MsNet):
        def __init__(self):
            super().__init__()
            self.scale = ms.Parameter(ms.Tensor(np.linspace(0.5, 1.5, 8, dtype=np.float32)), name="scale")

        def construct(self, x):
            return super().construct(x) * self.scale

    t, m = TorchPos().eval(), MsPos()
    m.set_train(False)
    choice = choose_weights(t, m)
    assert choice.run_with == "torch" and "held torch's values for 1 of 3 parameters" in choice.judged


def test_a_ckpt_is_loaded_into_the_mindspore_model_and_judged(tmp_path):
    t = trained_torch()
    good = tmp_path / "good.ckpt"
    ms.save_checkpoint(converted(t), str(good))
    fresh = MsNet()
    fresh.set_train(False)
    report = compare(t, fresh, batch(), weights=good)
    assert report.passed, str(report)
    assert report.meta["weights"]["file"] == str(good)
    assert f"weights judged: the MindSpore model's, as loaded from {good}" in str(report)

    dropped = tmp_path / "dropped.ckpt"
    ms.save_checkpoint(converted(t, skip={"fc.bias"}), str(dropped))
    assert [r.name for r in compare(t, MsNet(), batch(), weights=str(dropped)).failures if r.kind == "weight"] \
        == ["fc.bias"]


def test_a_ckpt_key_the_model_does_not_have_fails_by_name_and_the_parameter_it_missed_is_named(tmp_path):
    t = trained_torch()
    state = {p.name: p for p in converted(t).get_parameters()}
    state["bn.bias"] = state.pop("bn.beta")          # the user spelt torch's name
    misspelt = tmp_path / "misspelt.ckpt"
    ms.save_checkpoint([{"name": k, "data": v} for k, v in state.items()], str(misspelt))
    m = MsNet()
    m.set_train(False)
    report = compare(t, m, batch(), weights=misspelt)
    assert not report.passed
    row = report.row("misspelt.ckpt['bn.bias']")
    assert row.kind == "weight" and "has no parameter for" in row.message and str(misspelt) in row.message
    assert report.meta["weights"]["not_in_file"] == ["bn.beta"]
    assert "1 parameters not in the file kept their own values: bn.beta" in str(report)


def test_a_torch_file_is_converted_as_recompat_weights_does_and_judged(tmp_path):
    t = trained_torch()
    path = tmp_path / "model.pt"
    torch.save(t.state_dict(), path)
    m = MsNet()
    m.set_train(False)
    report = compare(t, m, batch(), weights=path)
    assert report.passed, str(report)
    assert f"{path} (converted as `recompat weights` does)" in str(report)


def test_weight_files_that_cannot_be_used_are_refused_by_name_and_nothing_is_loaded(tmp_path):
    t = trained_torch()
    with pytest.raises(WeightFileError, match="missing.ckpt: no such file"):
        compare(t, MsNet(), batch(), weights=tmp_path / "missing.ckpt")
    with pytest.raises(ValueError, match=r"weights must be 'auto', 'torch', 'mindspore' or 'as-is' or the path of a "
                                         r"weight file .*not 'notes.txt'"):
        compare(t, MsNet(), batch(), weights="notes.txt")

    other = MsNet()
    other.fc = mnn.Dense(6, 5)
    wrong = tmp_path / "wrong.ckpt"
    ms.save_checkpoint(other, str(wrong))
    m = MsNet()
    before = {p.name: p.asnumpy().copy() for p in m.get_parameters()}
    with pytest.raises(WeightFileError, match=r"wrong.ckpt: does not fit the MindSpore model: fc.weight .*\(5, 6\).*"
                                              r"\(8, 6\)"):
        choose_weights(t, m, wrong)
    assert all(np.array_equal(before[p.name], p.asnumpy()) for p in m.get_parameters())


def test_the_html_report_says_which_weights_were_judged():
    import json

    from recompat.reports import html

    t = trained_torch()
    report = compare(t, converted(t, skip={"fc.bias"}), batch())
    doc = {"format": 1, "kind": "recompat-suite", "meta": {}, "totals": {}, "results": [
        {"id": "net-cross", "pair": "net", "check": "cross", "variant": "plain", "device": "cpu",
         "ms_mode": "pynative", "status": "failed", "message": report.summary(), "figures": {}, "seconds": 1.0,
         "report": json.loads(report.to_json())}]}       # through JSON, as `recompat report` reads it
    page = html.render(doc)
    assert "Weights judged: the MindSpore model&#39;s own, as the user converted them" in page
