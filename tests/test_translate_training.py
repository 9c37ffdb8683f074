"""translate --scope model on the training loop's pieces (mappings/training.yaml, the shipped entries): optimizers,
losses and schedules are rewritten as classes are, an optimizer's `m.parameters()` becomes `m.trainable_params()`,
a left-out setting the target lacks or requires is written out, and what does not carry over call for call
(clipping .grad in place, backward, zero_grad) is reported where it is. The runtime test trains the translated
pieces against torch's own with compare_training.
"""
from __future__ import annotations

import ast
import importlib.util
import os
import sys
import textwrap
import uuid

import pytest

from recompat import mappings
from recompat.translator import convert
from recompat.translator.translate import translate_bytes

SCRIPT = textwrap.dedent("""\
    import torch
    from torch import nn


    class Net(nn.Module):
        def __init__(self):
            super().__init__()
            self.fc = nn.Linear(6, 4)
            self.head = nn.Linear(4, 3)

        def forward(self, x):
            return self.head(torch.relu(self.fc(x)))


    def pieces(model):
        optimizer = torch.optim.AdamW([{"params": model.fc.parameters(), "lr": 0.02},
                                       {"params": [p for p in model.head.parameters() if p.ndim == 2]}],
                                      lr=0.01, weight_decay=0.1)
        schedule = torch.optim.lr_scheduler.StepLR(optimizer, step_size=2, gamma=0.5)
        loss = nn.CrossEntropyLoss(label_smoothing=0.1)
        return optimizer, schedule, loss


    def plain(model, params):
        return torch.optim.Adam(model.parameters(), lr=0.1), torch.optim.SGD(params)


    def loop(model, optimizer, loss, x, y):
        optimizer.zero_grad()
        value = loss(model(x), y)
        value.backward()
        torch.nn.utils.clip_grad_norm_(model.parameters(), 1.0)
        optimizer.step()
    """)


def translate(code: str, to: str = "mindspore"):
    r = translate_bytes(code.encode(), "train.py", to=to, scope="model")
    out = (r.new_data or code.encode()).decode()
    ast.parse(out)
    return out, {(d.code, d.line): d for s in r.sites for d in s.diagnostics}


def test_optimizers_schedules_and_losses_are_rewritten_with_their_parameters():
    out, diags = translate(SCRIPT)
    assert ('optimizer = mindspore.experimental.optim.AdamW([{"params": model.fc.trainable_params(), "lr": 0.02},\n'
            '                                   {"params": [p for p in model.head.trainable_params() if p.ndim == 2]}],\n'
            '                                  lr=0.01, weight_decay=0.1)') in out   # the layout inside stays
    assert "schedule = mindspore.experimental.optim.lr_scheduler.StepLR(optimizer, step_size=2, gamma=0.5)" in out
    assert "loss = nn.CrossEntropyLoss(label_smoothing=0.1)" in out
    # torch's Adam is MindSpore's AdamW without decoupled decay (its default there is 0.01); SGD's lr is required
    assert ("return mindspore.experimental.optim.AdamW(model.trainable_params(), lr=0.1, weight_decay=0.0), "
            "mindspore.experimental.optim.SGD(params, lr=0.001)") in out
    assert diags[("RC310", 25)].status == "partial" and "params is passed as it is" in diags[("RC310", 25)].message


def test_the_loop_is_reported_where_it_does_not_carry_over():
    out, diags = translate(SCRIPT)
    assert "optimizer.zero_grad()" in out and "value.backward()" in out        # left as they are
    zero, backward, clip = diags[("RC311", 29)], diags[("RC311", 31)], diags[("RC309", 32)]
    assert all(d.status == "manual" for d in (zero, backward, clip))
    assert zero.message.startswith("optimizer.zero_grad() is clearing the .grad torch accumulates")
    assert "mindspore.value_and_grad(forward_fn, None, optimizer.parameters)" in backward.message
    assert "grads = ops.clip_by_norm(grads, max_norm)" in clip.message
    assert "torch.nn.utils.clip_grad_norm_(model.parameters(), 1.0)" in out   # the call stays, torch's import too
    assert out.startswith("import torch\n")


def test_an_adam_with_l2_decay_stays_manual():
    out, diags = translate("import torch\nopt = torch.optim.Adam(m.parameters(), weight_decay=1e-4)\n")
    assert "torch.optim.Adam(m.parameters(), weight_decay=1e-4)" in out
    assert "MindSpore's AdamW decays decoupled" in diags[("RC309", 2)].message


def test_mindspore_training_pieces_come_back_to_torch():
    code = textwrap.dedent("""\
        from mindspore import nn
        from mindspore.experimental import optim

        net = nn.Dense(3, 2)
        opt = optim.AdamW([{"params": net.trainable_params(), "lr": 0.01}], lr=0.1)
        sched = optim.lr_scheduler.CosineAnnealingLR(opt, T_max=10)
        loss = nn.MSELoss()
        """)
    out, diags = translate(code, to="torch")
    # AdamW comes back as AdamW: optim_adam (torch's Adam -> MindSpore's AdamW) is translated from torch only
    assert 'opt = torch.optim.AdamW([{"params": net.parameters(), "lr": 0.01}], lr=0.1)' in out
    assert "sched = torch.optim.lr_scheduler.CosineAnnealingLR(opt, T_max=10)" in out
    assert "loss = nn.MSELoss()" in out and "import mindspore" not in out


@pytest.mark.parametrize("text, to, expected", [
    ("model.parameters()", "mindspore", "model.trainable_params()"),
    ("self.net.parameters(recurse=False)", "mindspore", "self.net.trainable_params(recurse=False)"),
    ("[{'params': a.parameters()},\n {'params': b.parameters(), 'lr': 1.0}]", "mindspore",
     "[{'params': a.trainable_params()},\n {'params': b.trainable_params(), 'lr': 1.0}]"),
    ("filter(lambda p: p.requires_grad, módulo.parameters())", "mindspore",
     "filter(lambda p: p.requires_grad, módulo.trainable_params())"),
    ("net.trainable_params()", "torch", "net.parameters()"),
])
def test_trainable_params_rewrites_every_parameters_call_in_the_argument(text, to, expected):
    out, note = convert.trainable_params(to, {"params": text}, {"params": "params"})
    assert out == {"params": expected} and note is None


def test_trainable_params_leaves_anything_else_with_a_note():
    out, note = convert.trainable_params("mindspore", {"params": "groups"}, {"params": "params"})
    assert out == {"params": "groups"} and "trainable_params()" in note


def test_same_reads_an_int_and_an_equal_float_as_one_setting():
    assert mappings.same("0", "0.0") and mappings.same("1e-3", "0.001")
    assert not mappings.same("True", "1") and not mappings.same("0", "None") and not mappings.same("1", "'1'")


def _import(path, name):
    spec = importlib.util.spec_from_file_location(name, path)
    module = importlib.util.module_from_spec(spec)
    sys.modules[name] = module
    spec.loader.exec_module(module)
    return module


@pytest.mark.runtime
def test_the_translated_pieces_train_as_torchs_do(tmp_path):
    """The MindSpore output imports, its optimizer, schedule and loss build on the translated Cell, and trained
    against torch's own pieces (compare_training with the port's pieces given) they agree step by step."""
    os.environ.setdefault("GLOG_v", "3")
    import numpy as np
    import torch

    from recompat.compat import compare_training

    out, _ = translate(SCRIPT)
    (tmp_path / "torch_train.py").write_text(SCRIPT)
    (tmp_path / "ms_train.py").write_text(out)
    tag = uuid.uuid4().hex
    torch_side = _import(tmp_path / "torch_train.py", f"torch_train_{tag}")
    ms_side = _import(tmp_path / "ms_train.py", f"ms_train_{tag}")
    torch.manual_seed(0)
    torch_model, ms_model = torch_side.Net(), ms_side.Net()
    rng = np.random.default_rng(0)
    batches = [(rng.standard_normal((8, 6)).astype(np.float32), rng.integers(0, 3, 8)) for _ in range(3)]
    optimizer, schedule, loss = torch_side.pieces(torch_model)
    ms_optimizer, ms_schedule, ms_loss = ms_side.pieces(ms_model)
    report = compare_training(torch_model, ms_model, batches, loss=loss, optimizer=optimizer, schedule=schedule,
                              mindspore_optimizer=ms_optimizer, mindspore_schedule=ms_schedule,
                              mindspore_loss=ms_loss, steps=6)
    assert report.passed, str(report)
    # the schedule stepped on both sides: the first group's rate 0.02 halved twice by step 6
    rates = report.steps[-1].lr
    assert {"torch", "MindSpore"} <= set(rates) and all(r == pytest.approx(0.005, rel=1e-6) for r in rates.values())
