"""The core API set's paired examples: each is a model file on its source side and the translator's output on the
other; the differential harness proves the pair (recompat.compat.examples) and output.txt records what it found.

Every core entry has one, its generated side is what `recompat translate --scope model` gives now, the pair agrees
and output.txt is what run_model_example prints; a planted bug on the MindSpore side makes the pair fail, naming
the difference; the pages show both sides and what the harness recorded. Generating, recording and checking
(`recompat prove`) are tested in test_prove.py.
"""
from __future__ import annotations

import json
import shutil
import sys
from pathlib import Path

import pytest

from recompat import mappings
from recompat.compat import prove
from recompat.compat.examples import SHOWN, ExampleError, run_draw_example, run_init_example, run_model_example
from recompat.reports import docs

CORE = [e for e in mappings.default().entries if e.rule in mappings.CORE_RULES]
IDS = [e.id for e in CORE]

TORCH_LINEAR = '''\
"""nn.Linear: renamed parameters, same weight layout."""
import numpy as np
from torch import nn


class Example(nn.Module):
    def __init__(self):
        super().__init__()
        self.layer = nn.Linear(4, 3)

    def forward(self, x):
        return self.layer(x)


INPUTS = [np.linspace(-1.0, 1.0, 8, dtype=np.float32).reshape(2, 4)]
'''

# hand-written pairs for the harness alone (no translation): a Linear and a BatchNorm in train mode
TORCH_BN = '''\
import numpy as np
from torch import nn


class Example(nn.Module):
    def __init__(self):
        super().__init__()
        self.layer = nn.Linear(4, 3)
        self.bn = nn.BatchNorm1d(3)

    def forward(self, x):
        return self.bn(self.layer(x))


INPUTS = [np.linspace(-1.0, 1.0, 12, dtype=np.float32).reshape(3, 4)]
TRAINING = True
'''
MS_BN = '''\
import numpy as np
from mindspore import nn


class Example(nn.Cell):
    def __init__(self):
        super().__init__()
        self.layer = nn.Dense(4, 3{bias})
        self.bn = nn.BatchNorm1d(3, momentum={momentum})

    def construct(self, x):
        return self.bn(self.layer(x))


INPUTS = [np.linspace(-1.0, 1.0, 12, dtype=np.float32).reshape(3, 4)]
TRAINING = True
'''


def _pair(tmp_path, torch_code=TORCH_BN, ms_code=MS_BN.format(bias="", momentum=0.9)) -> tuple[Path, Path]:
    t, m = tmp_path / "torch_example.py", tmp_path / "mindspore_example.py"
    t.write_text(torch_code, encoding="utf-8")
    m.write_text(ms_code, encoding="utf-8")
    return t, m


# ------------------------------------------------------------------------------------- the committed examples

@pytest.mark.parametrize("entry", CORE, ids=IDS)
def test_generated_side_is_what_translation_gives_now(entry):
    source, target = prove.sides(entry)
    folder = prove.examples_root() / entry.id
    assert (folder / f"{source}_example.py").is_file(), (
        f"{entry.id}: no paired example — write {folder / f'{source}_example.py'} (a model `Example` and its "
        "`INPUTS`), then run `recompat prove`")
    path, data, _ = prove.generated_example(entry)
    assert path.is_file() and path.read_bytes() == data, (
        f"{path} is not what `recompat translate --scope model` gives now: run `recompat prove`")
    for side in (source, target):
        api = getattr(entry, side)["api"].rsplit(".", 1)[-1]
        assert api in (folder / f"{side}_example.py").read_text(encoding="utf-8"), \
            f"{entry.id}: the {side} side does not use {api}"


# Entries whose pair does not agree yet: no output.txt, so the translator leaves their API as it is (RC302).
# Strict: the day one agrees, record it (`recompat prove`) and take it off this list.
UNPROVEN = {
    "ms_layer_norm": "MindSpore 2.10's ops.layer_norm has no CPU kernel (its hand-written MindSpore side cannot run "
                     "here; F.layer_norm goes to recompat.runtime.layer_norm, entry f_layer_norm)",
}


def _unproven(entries):
    return [pytest.param(e, marks=pytest.mark.xfail(reason=UNPROVEN[e.id], strict=True)) if e.id in UNPROVEN
            else e for e in entries]


def test_unproven_entries_have_no_output_txt():
    for entry_id in UNPROVEN:
        assert not (prove.examples_root() / entry_id / "output.txt").exists(), entry_id
        assert not mappings.default().entry(entry_id).proven, entry_id


@pytest.mark.runtime
@pytest.mark.parametrize("entry", _unproven(CORE), ids=IDS)
def test_paired_example_agrees_under_the_harness_and_output_txt_records_it(entry):
    ex = prove.example_for(entry.id)
    assert ex is not None, f"{entry.id}: no paired example — run `recompat prove`"
    if entry.example_kind == "tensor":      # no model: init(tensor), proven by what it writes
        text = run_init_example(ex.torch_path, ex.mindspore_path)
    elif entry.example_kind == "draw":      # draw(), proven by the distribution of what it draws
        text = run_draw_example(ex.torch_path, ex.mindspore_path)
    else:
        run = run_model_example(ex.torch_path, ex.mindspore_path)   # raises, naming the file, when the pair differs
        assert run.ok
        text = run.text
    assert ex.output == text, (f"{ex.output_path} is not what the harness prints: run "
                               "`recompat prove` and commit")
    page = (docs.repo_docs() / "en" / f"{entry.id}.md").read_text(encoding="utf-8")
    assert text.rstrip() in page and ex.torch_code.rstrip() in page and ex.mindspore_code.rstrip() in page


# -------------------------------------------------------------------------------------------------- the harness

@pytest.mark.runtime
def test_a_pair_that_agrees_gives_the_same_text_every_time_and_leaves_no_trace(tmp_path):
    import torch

    t, m = _pair(tmp_path)
    rng = torch.get_rng_state()
    first = run_model_example(t, m)
    assert first.ok and first.training
    assert first.text == run_model_example(t, m).text
    lines = first.text.splitlines()
    assert lines[0].startswith("output shape (3, 3): ") and len(lines[0].split(": ")[1].split()) == SHOWN + 1   # and ...
    assert lines[-1] == "train mode: 1 output and 5 gradients and 2 buffers agree (the round-off rule against float64)"
    assert not [m for m in sys.modules if m.startswith("_recompat_example")], "example modules stay out of sys.modules"
    assert torch.equal(torch.get_rng_state(), rng), "the caller's torch RNG is left as it was"


@pytest.mark.runtime
def test_planted_bug_dense_without_bias_is_named(tmp_path):
    t, m = _pair(tmp_path, ms_code=MS_BN.format(bias=", has_bias=False", momentum=0.9))
    with pytest.raises(ExampleError) as caught:
        run_model_example(t, m)
    message = str(caught.value)
    assert message.startswith(str(m)) and str(t) in message
    assert "'layer.bias'" in message and "has no bias" in message


@pytest.mark.runtime
def test_an_example_that_sets_rtol_and_atol_is_judged_by_them(tmp_path):
    tolerances = "\nRTOL = 1e-3\nATOL = 1e-4\n"
    t, m = _pair(tmp_path, torch_code=TORCH_BN + tolerances, ms_code=MS_BN.format(bias="", momentum=0.9) + tolerances)
    run = run_model_example(t, m)
    assert run.text.splitlines()[-1].endswith("agree (rtol 1e-3, atol 1e-4)")
    assert all(r.rtol == 1e-3 and r.atol == 1e-4 for r in run.report.rows if r.kind != "setting")


@pytest.mark.runtime
def test_planted_bug_wrong_batchnorm_momentum_is_named(tmp_path):
    t, m = _pair(tmp_path, ms_code=MS_BN.format(bias="", momentum=0.1))   # torch's 0.1 is MindSpore's 0.9
    with pytest.raises(ExampleError) as caught:
        run_model_example(t, m)
    message = str(caught.value)
    assert message.startswith(str(m))
    assert "bn.running_mean" in message and "bn.running_var" in message and "momentum=0.9" in message
    report = caught.value.report
    assert report is not None
    assert {r.name for r in report.failures} == {"bn.running_mean", "bn.running_var", "bn.momentum"}


@pytest.mark.runtime
@pytest.mark.parametrize("ms_code,expected", [
    ("import numpy as np\nfrom mindspore import nn\nclass Example(nn.Cell:\n", "importing it raised SyntaxError"),
    ("import numpy as np\nfrom mindspore import nn\nclass Model(nn.Cell):\n    pass\nINPUTS = [np.zeros(1)]\n",
     "defines no class Example(nn.Cell)"),
    (MS_BN.format(bias="", momentum=0.9).replace("TRAINING = True", "TRAINING = False"),
     "TRAINING = False, but"),
    (MS_BN.format(bias="", momentum=0.9).replace("(3, 4)", "(4, 3)"), "INPUTS differ"),
], ids=["syntax", "no-example", "training", "inputs"])
def test_a_broken_side_is_a_clear_error_naming_the_file(tmp_path, ms_code, expected):
    t, m = _pair(tmp_path, ms_code=ms_code)
    with pytest.raises(ExampleError) as caught:
        run_model_example(t, m)
    assert str(caught.value).startswith(str(m)) and expected in str(caught.value)


# ------------------------------------------------------------------------------------------------- the pages

def test_pages_show_both_sides_and_what_the_harness_recorded(tmp_path):
    folder = tmp_path / "mappings"
    shutil.copytree(mappings.HERE, folder, ignore=shutil.ignore_patterns("__pycache__", "examples"))
    ex = folder / "examples" / "linear"
    ex.mkdir(parents=True)
    (ex / "torch_example.py").write_text(TORCH_LINEAR, encoding="utf-8")
    (ex / "mindspore_example.py").write_text("# generated\nclass Example: ...\n", encoding="utf-8")
    recorded = "output shape (2, 3): 0.1 0.2\neval mode: 1 output and 3 gradients agree (rtol 1e-4, atol 1e-5)\n"
    (ex / "output.txt").write_text(recorded, encoding="utf-8")
    files = {k: v.decode("utf-8") for k, v in docs.build(mappings_folder=folder).items()}
    for lang in docs.LANGS:
        md = files[f"{lang}/linear.md"]
        assert TORCH_LINEAR.rstrip() in md and "class Example: ..." in md and recorded.rstrip() in md
        assert md.index(TORCH_LINEAR.rstrip()) < md.index("class Example: ...") < md.index(recorded.rstrip())
        assert "recompat.compat.compare" in md and "recompat translate --scope model" in md
        assert docs._TEXT[lang]["harness_says"] in md and docs._TEXT[lang]["unproven"] not in md
        assert "behaviours.md" not in md, "the recompute guide belongs to the checkpoint pages"
    (ex / "output.txt").unlink()
    files = {k: v.decode("utf-8") for k, v in docs.build(mappings_folder=folder).items()}
    assert docs._TEXT["en"]["unproven"] in files["en/linear.md"]
    assert docs._TEXT["en"]["harness_says"] not in files["en/linear.md"]
    shutil.rmtree(ex)
    files = {k: v.decode("utf-8") for k, v in docs.build(mappings_folder=folder).items()}
    assert "add `mappings/examples/linear/torch_example.py` (a model `Example`" in files["en/linear.md"]
    doc_entry = next(e for e in json.loads(files["mappings.json"])["entries"] if e["id"] == "linear")
    assert doc_entry["direction"] == "both-ways" and doc_entry["example"] is None
