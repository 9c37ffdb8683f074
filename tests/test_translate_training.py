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


def test_the_step_becomes_a_function_on_recompats_grad():
    """backward() and the statement that made the loss become the function MindSpore differentiates; zero_grad(),
    the clipping and the optimizer's step() go statement for statement on the .grad recompat.runtime keeps."""
    out, diags = translate(SCRIPT)
    assert out.endswith(textwrap.dedent("""\
        def loop(model, optimizer, loss, x, y):
            zero_grad(optimizer)
            value: object
            def forward_fn():
                nonlocal value
                value = loss(model(x), y)
                return value
            backward(forward_fn, loss, model, optimizer)
            clip_grad_norm_(model.get_parameters(), 1.0)
            optimizer_step(optimizer)
        """))
    assert "from recompat.runtime import backward, clip_grad_norm_, optimizer_step, zero_grad" in out
    assert {c: diags[(c, line)].status for c, line in [("RC341", 29), ("RC340", 31), ("RC342", 32), ("RC341", 33)]} \
        == {"RC341": "converted", "RC340": "converted", "RC342": "converted"}
    assert "the 1 statement(s) before it that make the loss" in diags[("RC340", 31)].message
    assert "import torch" not in out


STEP = textwrap.dedent("""\
    import torch
    from torch import nn


    class Net(nn.Module):
        def __init__(self):
            super().__init__()
            self.fc = nn.Linear(6, 8)
            self.norm = nn.LayerNorm(8)
            self.head = nn.Linear(8, 3)

        def forward(self, x):
            return self.head(torch.tanh(self.norm(self.fc(x))))


    def train(model, batches, accumulate, clip):
        optimizer = torch.optim.AdamW(model.parameters(), lr=0.05, weight_decay=0.1)
        scheduler = torch.optim.lr_scheduler.StepLR(optimizer, step_size=2, gamma=0.5)
        criterion = nn.CrossEntropyLoss()
        losses, norms = [], []
        for i, (x, y) in enumerate(batches):
            x = x * 2.0
            out = model(x)
            loss = criterion(out, y) / accumulate
            loss.backward()
            losses.append(loss.item())
            if (i + 1) % accumulate == 0:
                norms.append(float(torch.nn.utils.clip_grad_norm_(model.parameters(), clip)))
                optimizer.step()
                optimizer.zero_grad()
                scheduler.step()
        return losses, norms
    """)


@pytest.mark.runtime
@pytest.mark.parametrize("accumulate, clip", [(1, 100.0), (3, 0.05)], ids=["plain", "accumulated and clipped"])
def test_the_translated_step_trains_as_torchs_does(tmp_path, accumulate, clip):
    """The step translated whole (a parameter the statements reassign, gradient accumulation, clipping that acts,
    a schedule, zero_grad after step) takes torch's steps: every loss, every clipped norm and the final
    parameters agree."""
    os.environ.setdefault("GLOG_v", "3")
    import numpy as np
    import torch

    import mindspore as ms
    from recompat.compat.weights import transfer_weights

    out, diags = translate(STEP)
    assert not [d for d in diags.values() if d.status == "manual"], out
    assert "        def forward_fn():\n            nonlocal x, out, loss\n            x = x * 2.0\n" in out
    assert "        backward(forward_fn, model, criterion, optimizer)\n" in out
    (tmp_path / "torch_step.py").write_text(STEP)
    (tmp_path / "ms_step.py").write_text(out)
    tag = uuid.uuid4().hex
    torch_side = _import(tmp_path / "torch_step.py", f"torch_step_{tag}")
    ms_side = _import(tmp_path / "ms_step.py", f"ms_step_{tag}")
    torch.manual_seed(0)
    torch_model, ms_model = torch_side.Net(), ms_side.Net()
    transfer_weights(torch_model, ms_model)
    rng = np.random.default_rng(0)
    batches = [(rng.standard_normal((8, 6)).astype(np.float32), rng.integers(0, 3, 8)) for _ in range(6)]
    t_losses, t_norms = torch_side.train(torch_model, [(torch.from_numpy(x), torch.from_numpy(y))
                                                       for x, y in batches], accumulate, clip)
    m_losses, m_norms = ms_side.train(ms_model, [(ms.Tensor(x), ms.Tensor(y, ms.int32)) for x, y in batches],
                                      accumulate, clip)
    np.testing.assert_allclose(m_losses, t_losses, rtol=1e-5, atol=1e-6)
    np.testing.assert_allclose(m_norms, t_norms, rtol=1e-5)
    if clip < 1:
        assert min(t_norms) > clip, "the clipping must act for the case to prove it"
    for name, a, b in transfer_weights(torch_model, ms_model, copy=False).values():
        np.testing.assert_allclose(b, a, rtol=1e-4, atol=1e-5, err_msg=name)


MULTILINE = 'note = """a\nb"""\nloss = crit(model(x), y)\nloss.backward()\noptimizer.step()'


@pytest.mark.parametrize("code, why", [
    ("out = model(x)\nschedule.step()\nloss = crit(out, y)\nloss.backward()\noptimizer.step()",
     "the loss is also made from out, which the code assigns elsewhere in the loop"),
    ("loss = crit(model(x), y)\nloss.backward(retain_graph=True)\noptimizer.step()",
     "backward() with arguments"),
    ("loss = crit(model(x), y); loss.backward()\noptimizer.step()", "statements share a line"),
    ("if log:\n    loss = crit(model(x), y)\nloss.backward()\noptimizer.step()",
     "loss is not made by the statements just before backward()"),
    ("loss.backward()\noptimizer.step()", "no statement just before it in its block"),
    (MULTILINE, "a string across lines"),
    ("loss = (x * y).sum()\nloss.backward()\nthing.step()", "nothing here says what to differentiate with respect to"),
], ids=["made elsewhere", "arguments", "one line", "made in a branch", "nothing before", "string",
        "no optimizer"])
def test_a_step_that_cannot_be_made_a_function_is_left_whole_with_the_reason(code, why):
    body = textwrap.indent(code, "        ")
    optimizer = "" if "thing" in code else "    optimizer = torch.optim.SGD(model.parameters(), lr=0.1)\n"
    source = f"import torch\n\n\ndef train(model, crit, loader, log):\n{optimizer}    for x, y in loader:\n{body}\n"
    out, diags = translate(source)
    refused = [d for (c, _), d in diags.items() if c == "RC343"]
    assert len(refused) == 1 and why in refused[0].message, [d.message for d in diags.values()]
    assert refused[0].status == "manual" and "def forward_fn" not in out and ".backward(" in out


def test_a_with_block_goes_into_the_function_whole():
    """A with block, an if, a loop go into the function whole; the names they assign stay the function's own
    (nonlocal), and one that nothing else binds is declared first, unbound until the function runs."""
    out, _ = translate(textwrap.dedent("""\
        import torch


        def step(model, optimizer, x):
            optimizer.zero_grad()
            with torch.no_grad():
                target = model(x)
            loss = ((model(x) - target) ** 2).mean()
            loss.backward()
            optimizer.step()
        """))
    assert textwrap.indent(textwrap.dedent("""\
        target: object
        loss: object
        def forward_fn():
            nonlocal target, loss
            with no_grad():
                target = model(x)
            loss = ((model(x) - target) ** 2).mean()
            return loss
        backward(forward_fn, model, optimizer)
        optimizer_step(optimizer)"""), "    ") in out


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


def test_straight_line_setup_goes_before_the_function_and_a_value_made_before_a_boundary_is_refused():
    """In a function with no loop, what builds what the step is given (the model, the optimizer) goes before the
    function; an activation made with the model before a boundary (here a schedule's step()) would not be
    differentiated by MindSpore (a gradient of zero, silently), so that step is refused."""
    out, diags = translate(textwrap.dedent("""\
        import torch
        from torch import nn


        def once(x, y):
            model = nn.Linear(4, 2)
            optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
            target = y * 2
            loss = ((model(x) - target) ** 2).mean()
            loss.backward()
            optimizer.step()


        def late(model, optimizer, schedule, x, y):
            out = model(x)
            schedule.step()
            loss = ((out - y) ** 2).mean()
            loss.backward()
            optimizer.step()
        """))
    assert textwrap.indent(textwrap.dedent("""\
        optimizer = mindspore.experimental.optim.SGD(model.trainable_params(), lr=0.1)
        target: object
        loss: object
        def forward_fn():
            nonlocal target, loss
            target = y * 2
            loss = ((model(x) - target) ** 2).mean()
            return loss
        backward(forward_fn, model, optimizer)"""), "    ") in out
    refused = [d for (c, _), d in diags.items() if c == "RC343"]
    assert len(refused) == 1 and "the loss is also made from out" in refused[0].message
    # the step left whole: its optimizer.step() is not rewritten either
    assert out.rstrip().endswith("loss.backward()\n    optimizer.step()")


def test_a_docstring_stays_the_functions_and_an_unknown_step_is_told():
    """pytorch-tabnet's _train_batch: the function's docstring (a string across lines) is no statement of the step
    and stays its __doc__; `self._optimizer.step()` on what the file does not build as an optimizer is told
    (RC344), not left silently beside a translated backward()."""
    out, diags = translate(textwrap.dedent('''\
        import torch


        class Trainer:
            def train_batch(self, x, y):
                """One batch.

                Returns the loss.
                """
                for p in self.network.parameters():
                    p.requires_grad_(True)
                out = self.network(x)
                loss = self.loss_fn(out, y)
                loss.backward()
                self._optimizer.step()
                return loss
        '''))
    assert '    def train_batch(self, x, y):\n        """One batch.\n\n        Returns the loss.\n        """\n' in out
    assert "backward(forward_fn, self.network, self.loss_fn)" in out and "self._optimizer.step()" in out
    told = [d for (c, _), d in diags.items() if c == "RC344"]
    assert len(told) == 1 and told[0].status == "partial" and "optimizer_step(self._optimizer)" in told[0].message


AMP = textwrap.dedent("""\
    import torch
    from torch import nn

    model = nn.Linear(4, 2)
    optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
    scaler = torch.cuda.amp.GradScaler(1024.0, enabled=True)


    def train(x, y):
        with torch.autocast(device_type="cuda", dtype=torch.float16):
            loss = ((model(x) - y) ** 2).mean()
        scaler.scale(loss).backward()
        scaler.unscale_(optimizer)
        torch.nn.utils.clip_grad_norm_(model.parameters(), 1.0)
        scaler.step(optimizer)
        scaler.update()
        optimizer.zero_grad(set_to_none=True)
    """)


def test_a_scaled_step_differentiates_the_scaled_loss_and_the_scaler_steps_the_optimizer():
    out, diags = translate(AMP)
    assert "scaler = GradScaler(init_scale=1024.0, enabled=True)" in out     # by name: device comes first there
    assert "        return scaler.scale(loss)\n    backward(forward_fn, model, optimizer)" in out
    for kept in ("scaler.unscale_(optimizer)", "scaler.step(optimizer)", "scaler.update()"):
        assert f"\n    {kept}\n" in out                                        # recompat.runtime.GradScaler's own
    assert "optimizer_step" not in out and "RC344" not in {code for code, _ in diags}
    assert 'with autocast(device_type="cuda"):' in out
    dropped = [d for (code, _), d in diags.items() if code == "RC306"]
    assert len(dropped) == 1 and "no autocast region" in dropped[0].message
