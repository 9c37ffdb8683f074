"""translate --scope model: will each model class run on the target framework, told before anything runs
(translator/verdicts.py). Each test writes a small tree, translates it with --json and reads the verdicts."""
from __future__ import annotations

import json
import textwrap
from pathlib import Path

import pytest

from recompat.cli import main


def translate(tmp_path: Path, files: dict[str, str], capsys, *args: str) -> tuple[dict, str]:
    tree = tmp_path / "tree"
    for name, text in files.items():
        (tree / name).parent.mkdir(parents=True, exist_ok=True)
        (tree / name).write_text(textwrap.dedent(text), encoding="utf-8")
    report = tmp_path / "report.json"
    capsys.readouterr()
    code = main(["translate", str(tree), "--scope", "model", "--json", str(report), *args])
    assert code == 0
    doc = json.loads(report.read_text())
    return {c["cls"].rpartition(".")[2]: c for c in doc["classes"]}, capsys.readouterr().err


ATTN = """\
    import torch
    from torch import nn


    class Attn(nn.Module):
        def __init__(self):
            super().__init__()
            self.proj = nn.Linear(4, 4)
            self.attn = nn.MultiheadAttention(4, 2)

        def forward(self, x):
            return self.attn(self.proj(x), x, x)[0]
    """


def test_a_class_that_builds_a_class_left_torch_in_another_file_will_not_run_and_says_where(tmp_path, capsys):
    classes, err = translate(tmp_path, {"pkg/__init__.py": "", "pkg/attn.py": ATTN, "pkg/net.py": """\
        from torch import nn

        from .attn import Attn


        class Net(nn.Module):
            def __init__(self):
                super().__init__()
                self.block = Attn()

            def forward(self, x):
                return self.block(x)


        class Plain(nn.Module):
            def __init__(self):
                super().__init__()
                self.fc = nn.Linear(4, 4)

            def forward(self, x):
                return self.fc(x)
        """}, capsys)
    attn, net, plain = classes["Attn"], classes["Net"], classes["Plain"]
    assert attn["verdict"] == "will not run" and attn["at"].endswith("attn.py:9"), attn
    assert "torch.nn.MultiheadAttention" in attn["reason"]
    assert net["verdict"] == "will not run" and net["at"] == attn["at"], "the root cause's place, across files"
    assert net["reason"].startswith("it uses Attn, which will not run: RC301")
    assert plain["verdict"] == "runs" and not plain["reason"]
    assert "net.py:6:1: RC328 [manual] class Net will not run on the target framework: it uses Attn" in err
    assert "3 model classes: 1 will run, 0 may not (on some arguments: RC329), 2 will not (RC328)" in err


def test_what_runs_only_under_a_condition_may_not_run_and_a_method_nothing_calls_is_not_run(tmp_path, capsys):
    classes, err = translate(tmp_path, {"m.py": """\
        import torch
        from torch import nn


        class Optional(nn.Module):
            def __init__(self, attention=False):
                super().__init__()
                self.fc = nn.Linear(4, 4)
                if attention:
                    self.attn = nn.MultiheadAttention(4, 2)


        class Loader(nn.Module):
            def __init__(self):
                super().__init__()
                self.fc = nn.Linear(4, 4)

            def load_pretrained(self, path):
                self.load_state_dict(torch.hub.load_state_dict_from_url(path))


        class Loads(Loader):
            def __init__(self, path):
                super().__init__()
                self.load_pretrained(path)
        """}, capsys)
    assert classes["Optional"]["verdict"] == "may not run" and classes["Optional"]["at"].endswith("m.py:10")
    assert "m.py:5:1: RC329 [partial] class Optional may not run" in err
    assert classes["Loader"]["verdict"] == "runs", "load_pretrained is not called where it is built or run"
    loads = classes["Loads"]
    assert loads["verdict"] == "will not run" and "torch.hub" in loads["reason"], loads


def test_a_method_the_targets_tensor_has_under_the_same_name_runs(tmp_path, capsys):
    """RC320 leaves x.requires_grad_(False) by hand (nothing proves the two agree), but MindSpore's Tensor has it."""
    classes, _ = translate(tmp_path, {"m.py": """\
        import torch
        from torch import nn


        class Net(nn.Module):
            def forward(self, x):
                noise = torch.randn_like(x)
                noise.requires_grad_(False)
                return x + noise
        """}, capsys)
    assert classes["Net"]["verdict"] == "runs", classes["Net"]


def test_a_class_read_out_of_a_table_of_another_file_may_not_run_and_an_alias_is_the_class(tmp_path, capsys):
    """Hugging Face's `self.act = ACT2FN[config.hidden_act]`: ACT2FN, a module-level table in activations.py, holds
    a class left torch: which one a layer takes depends on the key, so the layer may not run (it was "runs", then
    failed on MindSpore with torch's gelu). A plain alias (`Default = Attn`) is followed to the class: will not
    run."""
    classes, err = translate(tmp_path, {"pkg/__init__.py": "", "pkg/attn.py": ATTN, "pkg/acts.py": """\
        from torch import nn

        from .attn import Attn

        ACT2CLS = {"relu": nn.ReLU, "attn": Attn}
        Default = Attn
        """, "pkg/net.py": """\
        from torch import nn

        from .acts import ACT2CLS, Default


        class Net(nn.Module):
            def __init__(self, act="relu"):
                super().__init__()
                self.act = ACT2CLS[act]()

            def forward(self, x):
                return self.act(x)


        class Aliased(nn.Module):
            def __init__(self):
                super().__init__()
                self.block = Default()
        """}, capsys)
    net, aliased, attn = classes["Net"], classes["Aliased"], classes["Attn"]
    assert net["verdict"] == "may not run" and net["at"] == attn["at"], net
    assert net["reason"].startswith("it uses ACT2CLS, which may not run: it uses Attn, which will not run: RC301")
    assert aliased["verdict"] == "will not run" and aliased["reason"].startswith("it uses Attn, which will not run")
    assert "ACT2CLS" not in classes and "Default" not in classes, "a value is no class of its own"


def test_a_base_outside_the_translated_files_is_a_diagnostic_never_a_silent_forward(tmp_path, capsys):
    classes, err = translate(tmp_path, {"modeling.py": """\
        import torch
        from torch import nn
        from transformers.modeling_layers import GradientCheckpointingLayer


        class DecoderLayer(GradientCheckpointingLayer):
            def __init__(self):
                super().__init__()
                self.fc = nn.Linear(4, 4)

            def forward(self, x):
                return self.fc(x)
        """}, capsys)
    layer = classes["DecoderLayer"]
    assert layer["verdict"] == "will not run" and layer["at"].endswith("modeling.py:6")
    assert "its base transformers.modeling_layers.GradientCheckpointingLayer is outside the translated files" in \
        layer["reason"] and "translate the file that defines it" in layer["reason"]
    assert "modeling.py:6:1: RC328 [manual] class DecoderLayer will not run" in err


def test_loose_scripts_beside_each_other_are_one_tree(tmp_path, capsys):
    """No package: `from model import Attn` in a script beside model.py is what Python imports from there."""
    classes, _ = translate(tmp_path, {"model.py": ATTN, "net.py": """\
        from torch import nn
        from model import Attn


        class Net(nn.Module):
            def __init__(self):
                super().__init__()
                self.a = Attn()
        """}, capsys)
    assert classes["Net"]["verdict"] == "will not run" and classes["Net"]["at"].endswith("model.py:9")


def test_mindspore_to_torch_too(tmp_path, capsys):
    classes, _ = translate(tmp_path, {"cell.py": """\
        import mindspore
        from mindspore import nn


        class Net(nn.Cell):
            def __init__(self):
                super().__init__()
                self.fc = nn.Dense(4, 4)
                self.odd = mindspore.nn.FlashAttentionScore(2)

            def construct(self, x):
                return self.fc(x)
        """}, capsys, "--to", "torch")
    assert classes["Net"]["verdict"] == "will not run" and "FlashAttentionScore" in classes["Net"]["reason"]


def test_the_html_report_shows_each_verdict_worst_first(tmp_path, capsys):
    tree = tmp_path / "tree"
    tree.mkdir()
    (tree / "attn.py").write_text(textwrap.dedent(ATTN), encoding="utf-8")
    page = tmp_path / "r.html"
    assert main(["translate", str(tree), "--scope", "model", "--report", str(page), "-q"]) == 0
    html = page.read_text(encoding="utf-8")
    assert "Model classes: will they run?" in html and 'class="badge s-will-not-run">will not run' in html
    assert "torch.nn.MultiheadAttention is outside the core API set" in html
