"""`recompat weights` and compat/weight_files.py: weight files converted between the frameworks, with the names of
the model they are for.

The MindSpore model is the translation recompat writes of a torch model file (the user's path: translate, then
convert the weights); each conversion is judged by loading the file strictly into the other side and pairing the
two models with transfer_weights(copy=False), which judges the values each holds, bit for bit."""
from __future__ import annotations

import importlib.util
import os
import sys
import textwrap
import uuid

os.environ.setdefault("GLOG_v", "3")

import numpy as np
import pytest
import torch

import mindspore as ms

from recompat import cli
from recompat.compat import weight_files
from recompat.compat.weight_files import WeightFileError, convert_file
from recompat.compat.weights import transfer_weights
from recompat.translator.translate import translate_bytes

pytestmark = pytest.mark.runtime

TORCH_SOURCE = textwrap.dedent('''
    import torch
    from torch import nn


    class Scale(nn.Module):
        """Its own 1-D weight and bias: spelled as a LayerNorm's, and not renamed on MindSpore."""
        def __init__(self, dim):
            super().__init__()
            self.weight = nn.Parameter(torch.ones(dim))
            self.bias = nn.Parameter(torch.zeros(dim))

        def forward(self, x):
            return x * self.weight + self.bias


    class Net(nn.Module):
        def __init__(self, vocab=11, dim=8, classes=3):
            super().__init__()
            self.embed = nn.Embedding(vocab, dim)
            self.conv = nn.Conv1d(dim, dim, 3, padding=1)
            self.bn = nn.BatchNorm1d(dim)
            self.norm = nn.LayerNorm(dim)
            self.scale = Scale(dim)
            self.act = nn.PReLU()
            self.blocks = nn.Sequential(nn.Linear(dim, dim), nn.ReLU(), nn.Linear(dim, dim, bias=False))
            self.head = nn.Linear(dim, classes)

        def forward(self, ids):
            x = self.embed(ids).transpose(1, 2)
            x = self.bn(self.conv(x)).transpose(1, 2)
            x = self.scale(self.norm(x))
            x = self.blocks(self.act(x))
            return self.head(x.mean(1))
''')


def _import(path, text: str):
    path.write_text(text)
    spec = importlib.util.spec_from_file_location(f"weights_{uuid.uuid4().hex}", path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


@pytest.fixture(scope="module")
def models(tmp_path_factory):
    """(torch module, translated MindSpore module, folder): the source file and its translation, imported."""
    folder = tmp_path_factory.mktemp("models")
    result = translate_bytes(TORCH_SOURCE.encode(), "net.py", scope="model")
    assert result.changed and not any(s.status == "manual" for s in result.sites)
    return _import(folder / "net.py", TORCH_SOURCE), _import(folder / "net_ms.py", result.new_data.decode()), folder


def _trained(tnet):
    """A torch Net whose every tensor differs from a fresh one's (running statistics included)."""
    torch.manual_seed(0)
    t = tnet.Net()
    with torch.no_grad():
        for p in t.parameters():
            p.add_(torch.randn_like(p))
    t.bn.running_mean.uniform_()
    t.bn.running_var.uniform_(1, 2)
    t.bn.num_batches_tracked += 7
    return t


def _same_values(t, m) -> list[str]:
    """The tensors whose values differ between a torch model and a MindSpore model (paired by transfer_weights)."""
    return [name for name, a, b in transfer_weights(t, m, copy=False).values() if not np.array_equal(a, b)]


def test_torch_file_to_checkpoint_loads_strictly_into_the_translated_model(models, tmp_path):
    tnet, mnet, _ = models
    t = _trained(tnet)
    torch.save(t.state_dict(), tmp_path / "net.pt")
    report = convert_file(tmp_path / "net.pt", tmp_path / "net.ckpt", mnet.Net())
    assert report.ok and report.written, report.text()
    state = ms.load_checkpoint(str(tmp_path / "net.ckpt"))
    # renamed where the layer pair says so, and only there: Scale's own weight/bias keep their names
    assert {"bn.gamma", "bn.moving_variance", "norm.gamma", "embed.embedding_table", "act.w",
            "scale.weight", "scale.bias", "blocks.2.weight"} <= set(state)
    assert "norm.weight" not in state and "scale.gamma" not in state
    assert tuple(state["conv.weight"].shape) == (8, 8, 1, 3)          # MindSpore's Conv1d layout
    assert report.dropped == [("bn.num_batches_tracked", report.dropped[0][1])]
    cell = mnet.Net()
    assert ms.load_param_into_net(cell, state, strict_load=True) == ([], [])
    assert _same_values(t, cell) == []
    ids = np.array([[1, 2, 3, 4], [5, 6, 7, 10]])
    t.eval()
    cell.set_train(False)
    np.testing.assert_allclose(cell(ms.Tensor(ids)).asnumpy(), t(torch.tensor(ids)).detach().numpy(),
                               rtol=1e-5, atol=1e-6)


def test_either_model_gives_the_same_file(models, tmp_path):
    """Names read from the torch original or from its translation: the same keys, shapes and values."""
    tnet, mnet, _ = models
    torch.save(_trained(tnet).state_dict(), tmp_path / "net.pt")
    convert_file(tmp_path / "net.pt", tmp_path / "a.ckpt", mnet.Net())
    convert_file(tmp_path / "net.pt", tmp_path / "b.ckpt", tnet.Net())
    a, b = (ms.load_checkpoint(str(tmp_path / f)) for f in ("a.ckpt", "b.ckpt"))
    assert set(a) == set(b)
    assert all(np.array_equal(a[k].asnumpy(), b[k].asnumpy()) for k in a)


@pytest.mark.parametrize("out", ["back.pt", "back.safetensors"])
def test_checkpoint_to_torch_file_loads_strictly(models, tmp_path, out):
    tnet, mnet, _ = models
    t = _trained(tnet)
    torch.save(t.state_dict(), tmp_path / "net.pt")
    convert_file(tmp_path / "net.pt", tmp_path / "net.ckpt", mnet.Net())
    report = convert_file(tmp_path / "net.ckpt", tmp_path / out, tnet.Net())
    assert report.ok and report.written, report.text()
    if out.endswith(".pt"):
        state = torch.load(tmp_path / out, weights_only=True)
    else:
        from safetensors.torch import load_file
        state = load_file(str(tmp_path / out))
    back = tnet.Net()
    back.load_state_dict(state, strict=True)
    original = t.state_dict()
    assert [k for k in original if not torch.equal(original[k], back.state_dict()[k])] == ["bn.num_batches_tracked"]
    # MindSpore keeps no batch count: the report says the fresh model's value was written, and why
    assert [k for k, _ in report.filled] == ["bn.num_batches_tracked"]


def test_guided_by_the_mindspore_model_back_to_torch(models, tmp_path):
    tnet, mnet, _ = models
    cell = mnet.Net()
    ms.save_checkpoint(cell, str(tmp_path / "cell.ckpt"))
    report = convert_file(tmp_path / "cell.ckpt", tmp_path / "cell.pt", cell)
    assert report.ok, report.text()
    assert any("num_batches_tracked" in n for n in report.notes)     # torch's load_state_dict sets it to 0
    t = tnet.Net()
    t.load_state_dict(torch.load(tmp_path / "cell.pt", weights_only=True), strict=True)
    assert _same_values(t, cell) == []


def test_bfloat16_and_half_are_kept_bit_for_bit(models, tmp_path):
    tnet, mnet, _ = models
    t = _trained(tnet).to(torch.bfloat16)
    t.head.half()
    torch.save(t.state_dict(), tmp_path / "bf16.pt")
    report = convert_file(tmp_path / "bf16.pt", tmp_path / "bf16.ckpt", mnet.Net())
    assert report.ok, report.text()
    assert any("bfloat16 in the file" in w for w in report.warnings)
    state = ms.load_checkpoint(str(tmp_path / "bf16.ckpt"))
    assert state["norm.gamma"].dtype == ms.bfloat16 and state["head.weight"].dtype == ms.float16
    back = convert_file(tmp_path / "bf16.ckpt", tmp_path / "bf16_back.pt", tnet.Net())
    assert back.ok, back.text()
    again = torch.load(tmp_path / "bf16_back.pt", weights_only=True)
    for k, v in t.state_dict().items():
        if k != "bn.num_batches_tracked":
            assert again[k].dtype == v.dtype and torch.equal(again[k], v), k


def test_a_training_checkpoint_gives_its_model_entry(models, tmp_path):
    tnet, mnet, _ = models
    t = _trained(tnet)
    opt = torch.optim.SGD(t.parameters(), lr=0.1)
    torch.save({"epoch": 3, "model": t.state_dict(), "optimizer": opt.state_dict()}, tmp_path / "train.pt")
    report = convert_file(tmp_path / "train.pt", tmp_path / "train.ckpt", mnet.Net())
    assert report.ok and any("'model'" in n and "'optimizer'" in n for n in report.notes), report.text()
    torch.save({"model": t.state_dict(), "ema": t.state_dict()}, tmp_path / "two.pt")
    with pytest.raises(WeightFileError, match=r"several dicts of tensors \('model', 'ema'\): name the model's "
                                              r"with --key"):
        convert_file(tmp_path / "two.pt", tmp_path / "two.ckpt", mnet.Net())
    assert convert_file(tmp_path / "two.pt", tmp_path / "two.ckpt", mnet.Net(), key="ema").ok
    with pytest.raises(WeightFileError, match=r"no entry 'student'.*'model', 'ema'"):
        convert_file(tmp_path / "two.pt", tmp_path / "two.ckpt", mnet.Net(), key="student")


def _problems(tmp_path, state, model, capsys=None):
    torch.save(state, tmp_path / "bad.pt")
    report = convert_file(tmp_path / "bad.pt", tmp_path / "bad.ckpt", model)
    assert not report.written and not (tmp_path / "bad.ckpt").exists()
    assert [p for p in tmp_path.iterdir() if ".tmp" in p.name] == []
    return report.problems


def test_missing_extra_and_misshapen_keys_are_all_listed_and_nothing_is_written(models, tmp_path):
    tnet, mnet, _ = models
    state = _trained(tnet).state_dict()
    del state["norm.weight"]
    state["head.weight_orig"] = state.pop("head.weight")
    state["extra.scale"] = torch.ones(3)
    problems = _problems(tmp_path, state, mnet.Net())
    assert any("'norm.gamma' (8,) has no key 'norm.weight'" in p for p in problems), problems
    assert any("'head.weight' (3, 8) has no key 'head.weight' in the file; the closest unused key of that shape: "
               "'head.weight_orig'" in p for p in problems), problems
    assert any("the file's key 'extra.scale' (3,) is no tensor of the model" in p for p in problems), problems
    assert problems[-1].startswith("What to do: give the model the weights are for")
    # a model built with other arguments than the weights were trained with
    problems = _problems(tmp_path, _trained(tnet).state_dict(), mnet.Net(classes=5))
    assert any("'head.weight' is (3, 8) in the file, but the model's tensor 'head.weight' needs (5, 8)" in p
               for p in problems), problems


def test_tied_tensors_take_one_value(tmp_path):
    from torch import nn

    class Tied(nn.Module):
        def __init__(self):
            super().__init__()
            self.a = nn.Linear(4, 4)
            self.b = self.a

    t = Tied()
    state = t.state_dict()
    assert set(state) == {"a.weight", "a.bias", "b.weight", "b.bias"}
    torch.save(state, tmp_path / "tied.pt")
    report = convert_file(tmp_path / "tied.pt", tmp_path / "tied.ckpt", t)
    assert report.ok, report.text()
    state = {k: v.clone() for k, v in state.items()}
    state["b.weight"] += 1
    problems = _problems(tmp_path, state, t)
    assert any("'a.weight' and 'b.weight' are one tensor of the model" in p for p in problems), problems


def test_bad_files_are_named_with_what_to_do(models, tmp_path):
    tnet, mnet, _ = models
    cell = mnet.Net()
    torch.save(tnet.Net().state_dict(), tmp_path / "net.pt")
    with pytest.raises(WeightFileError, match="both torch files"):
        convert_file(tmp_path / "net.pt", tmp_path / "x.safetensors", cell)
    with pytest.raises(WeightFileError, match=r"x\.npz: not a weight file recompat knows by its extension"):
        convert_file(tmp_path / "net.pt", tmp_path / "x.npz", cell)
    os.replace(tmp_path / "net.pt", tmp_path / "lies.ckpt")
    with pytest.raises(WeightFileError, match=r"lies\.ckpt: named \.ckpt, but it holds a torch file.*recompat "
                                              r"weights .*lies\.pt -o .*lies\.ckpt"):
        convert_file(tmp_path / "lies.ckpt", tmp_path / "x.pt", tnet.Net())
    torch.save(torch.nn.Sequential(torch.nn.Linear(2, 2)), tmp_path / "whole.pt")
    with pytest.raises(WeightFileError, match=r"whole\.pt: holds Python objects besides tensors.*model\.state_dict"):
        convert_file(tmp_path / "whole.pt", tmp_path / "x.ckpt", cell)
    (tmp_path / "junk.pt").write_bytes(b"not a torch file")
    with pytest.raises(WeightFileError, match=r"junk\.pt: named \.pt, but it is no file torch\.save writes"):
        convert_file(tmp_path / "junk.pt", tmp_path / "x.ckpt", cell)
    with pytest.raises(WeightFileError, match=r"absent\.pt: no such file"):
        convert_file(tmp_path / "absent.pt", tmp_path / "x.ckpt", cell)
    with pytest.raises(WeightFileError, match="give a torch nn.Module or a MindSpore nn.Cell"):
        torch.save(tnet.Net().state_dict(), tmp_path / "net.pt")
        convert_file(tmp_path / "net.pt", tmp_path / "x.ckpt", object())
    assert not any((tmp_path / n).exists() for n in ("x.ckpt", "x.pt", "x.safetensors", "x.npz"))


@pytest.mark.parametrize("spec, message", [
    ("Net", "give module:Class or path/to/file.py:Class"),
    ("{folder}/net.py:Nope", "has no 'Nope'"),
    ("{folder}/absent.py:Net", "absent.py: no such file"),
    ("no_such_module_here:Net", "cannot import 'no_such_module_here'"),
    ("{folder}/net.py:Net(dim=size)", "the arguments must be literals"),
    ("{folder}/net.py:Net(dim=-1)", "building it failed: RuntimeError"),
])
def test_model_specs_that_cannot_be_used_are_named(models, spec, message):
    _, _, folder = models
    with pytest.raises(WeightFileError, match=f"--model .*{message}".replace("(", r"\(").replace(")", r"\)")):
        weight_files.build_model(spec.format(folder=folder))


def test_the_command(models, tmp_path, capsys, monkeypatch):
    tnet, _, folder = models
    torch.save(_trained(tnet).state_dict(), tmp_path / "net.pt")
    (folder / "net_ms_cli.py").write_text((folder / "net_ms.py").read_text())
    monkeypatch.chdir(folder)
    monkeypatch.setattr(sys, "path", list(sys.path))
    code = cli.main(["weights", str(tmp_path / "net.pt"), "-o", str(tmp_path / "net.ckpt"),
                     "--model", "net_ms_cli:Net(vocab=11, dim=8)"])
    out = capsys.readouterr()
    assert code == 0, out.err
    assert "names from MindSpore Net: 17 tensors (8 renamed), 1 dropped" in out.out
    assert f"wrote {tmp_path / 'net.ckpt'}" in out.out
    code = cli.main(["weights", str(tmp_path / "net.pt"), "-o", str(tmp_path / "small.ckpt"),
                     "--model", f"{folder}/net_ms.py:Net(classes=2)", "-q"])
    out = capsys.readouterr()
    assert code == 2 and "problem: 'head.weight' is (3, 8) in the file" in out.err and "dropped:" not in out.err
    assert out.err.rstrip().endswith("nothing was written") and not (tmp_path / "small.ckpt").exists()
    code = cli.main(["weights", str(tmp_path / "net.pt"), "-o", str(tmp_path / "x.ckpt"), "--model", "Net"])
    assert code == 2 and "recompat: error: --model 'Net'" in capsys.readouterr().err


def test_what_torch_registers_as_none_keeps_mindsporess_fixed_value(tmp_path):
    """torch's InstanceNorm2d (affine=False) has no weight in its state dict, the GroupNorm it becomes on MindSpore
    holds a fixed gamma and beta: they are filled from the model, and the report says so."""
    source = ("import torch\nfrom torch import nn\n\n\nclass Net(nn.Module):\n    def __init__(self):\n"
              "        super().__init__()\n        self.conv = nn.Conv2d(2, 4, 3)\n        self.norm = nn.InstanceNorm2d(4)\n\n"
              "    def forward(self, x):\n        return self.norm(self.conv(x))\n")
    result = translate_bytes(source.encode(), "inorm.py", scope="model")
    tnet, mnet = _import(tmp_path / "inorm.py", source), _import(tmp_path / "inorm_ms.py", result.new_data.decode())
    t = tnet.Net()
    assert "norm.weight" not in t.state_dict()
    torch.save(t.state_dict(), tmp_path / "inorm.pt")
    report = convert_file(tmp_path / "inorm.pt", tmp_path / "inorm.ckpt", mnet.Net())
    assert report.ok, report.text()
    assert [k for k, _ in report.filled] == ["norm.gamma", "norm.beta"]
    assert "torch registers it as None" in report.filled[0][1]
    cell = mnet.Net()
    assert str(cell.load_state_dict(ms.load_checkpoint(str(tmp_path / "inorm.ckpt")))) == "<All keys matched successfully>"


def test_keys_are_paths_where_parameter_names_repeat(tmp_path):
    """Two MindSpore Parameters may share a name (a Cell built outside the model's attributes); the file is keyed by
    path, as Cell.state_dict() is, so both are written, and the note says how to load it."""
    from mindspore import Parameter, Tensor, nn as msnn

    class Twice(msnn.Cell):
        def __init__(self):
            super().__init__()
            self.a = Parameter(Tensor(np.ones(3, np.float32)), name="scale")
            self.b = Parameter(Tensor(np.zeros(2, np.float32)), name="scale")

    cell = Twice()
    torch.save({"a": torch.full((3,), 2.0), "b": torch.full((2,), 3.0)}, tmp_path / "twice.pt")
    report = convert_file(tmp_path / "twice.pt", tmp_path / "twice.ckpt", cell)
    assert report.ok and [d for _, d in report.pairs] == ["a", "b"], report.text()
    assert any("named otherwise than their path" in n and "load_state_dict" in n for n in report.notes)
    state = ms.load_checkpoint(str(tmp_path / "twice.ckpt"))
    assert state["a"].asnumpy().tolist() == [2.0] * 3 and state["b"].asnumpy().tolist() == [3.0] * 2
