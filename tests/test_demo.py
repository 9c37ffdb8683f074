"""`recompat demo`: translate examples/, run each model's translation against torch, write the report.

The pipeline must report honestly whatever the translation achieves, so besides the real run these tests plant a
translated file (a hand port of the seed MLP, as the translator is to write it) to prove both verdicts: the port
agrees with torch, and the same port with a layer's bias dropped is a mismatch. Every run writes into tmp_path.
"""
from __future__ import annotations

import json
import os
from pathlib import Path

import pytest

from recompat import cli
from recompat.cli import main
from recompat.reports import runs

# The seed MLP (examples/tinynets/mlp.py) in MindSpore, written as the translator is to write it.
MLP_PORT = '''\
"""The three-layer MLP, in MindSpore."""
import mindspore
from mindspore import nn, ops


class Net(nn.Cell):
    def __init__(self):
        super(Net, self).__init__()
        self.fc1 = nn.Dense(12, 24)
        self.fc2 = nn.Dense(24, 48)
        self.fc3 = nn.Dense(48, 2)

    def construct(self, x):
        x = ops.relu(self.fc1(x))
        x = mindspore.recompute(self._checkpoint, x, use_reentrant=False, early_stop=False)
        x = self.fc3(x)
        return x

    def _checkpoint(self, x):
        x = ops.relu(self.fc2(x))
        return x
'''
# A translation that lost fc2's bias: the parameter is still there (the weights transfer), construct ignores it.
NO_BIAS = MLP_PORT.replace("ops.relu(self.fc2(x))", "ops.relu(ops.matmul(x, self.fc2.weight.T))")
# A translation that does not import.
BROKEN = MLP_PORT.replace("class Net(nn.Cell):", "class Net(nn.Cell)")


def run(capsys, *args):
    code = main([str(a) for a in args])
    out, err = capsys.readouterr()
    return code, out, err


def plant(monkeypatch, text: str) -> None:
    """After the real translation, replace the translated tinynets/mlp.py with ``text``, which stands for a complete
    translation (its manual sites are taken out of the translation's JSON)."""
    real = runs.translation_doc

    def translate_then_plant(opts, **kwargs):
        doc = real(opts, **kwargs)
        (Path(opts.output) / "tinynets" / "mlp.py").write_text(text)
        for f in doc["files"]:
            if f["path"].replace(os.sep, "/").endswith("tinynets/mlp.py"):
                f["sites"] = [s for s in f["sites"] if s["status"] != "manual"]
        return doc

    monkeypatch.setattr(runs, "translation_doc", translate_then_plant)


def edit_translation(monkeypatch, rel: str, edit) -> None:
    """After the real translation, rewrite the translated file ``rel`` (under the output folder) with ``edit``."""
    real = runs.translation_doc

    def translate_then_edit(opts, **kwargs):
        doc = real(opts, **kwargs)
        path = Path(opts.output) / rel
        path.write_text(edit(path.read_text()))
        return doc

    monkeypatch.setattr(runs, "translation_doc", translate_then_edit)


def model(doc: dict, name: str) -> dict:
    return next(m for m in doc["models"] if m["name"] == name)


EVIL = "<img src=x onerror=alert(1)>"


# 5 training steps as `recompat demo` records them: MindSpore leaves torch's curve at step 3
TRAINING = {"steps": 5, "passed": False, "first_failure": 3, "failed_steps": 3,
            "verdict": "the round-off rule against a float64 run, step by step",
            "loss": {"torch": [1.2, 1.0, 0.9, 0.8, 0.75], "MindSpore": [1.2, 1.0, 0.95, 0.9, 0.88],
                     "torch (float64 reference)": [1.2, 1.0, 0.9, 0.8, 0.75]},
            "divergence": [1e-7, 2e-7, 1e-3, 5e-3, 1e-2], "setup": [], "message": f"loss: far {EVIL}",
            "pieces": {"optimizer": "torch.optim.sgd.SGD -> mindspore.experimental.optim.sgd.SGD (mappings/training.yaml)"}}


def demo_models() -> list[dict]:
    """Two model results as `recompat demo` writes them (one agrees, one does not), for rendering tests."""
    row = {"name": "fc2.bias.grad", "kind": "param-grad", "expected_shape": [48], "actual_shape": [48],
           "expected_dtype": "float32", "actual_dtype": "float32", "max_abs_err": 0.39, "max_rel_err": 1.0,
           "cosine": 0.0, "within": 0.2, "rtol": 1e-4, "atol": 1e-4, "passed": False, "message": f"far {EVIL}"}
    base = {"form": "cp(self._checkpoint, x)", "files": ["tinynets/mlp.py"], "translated": True, "manual": 0,
            "ran": True, "stage": "", "warnings": [], "buffers": {"total": 0, "differ": []}, "seconds": 1.5}
    ok = {"max_abs_err": 1e-8, "worst": "output", "passed": True, "failed": 0, "total": 1}
    return [
        dict(base, name="mlp", status="agree", reason="",
             errors={"output": ok, "input-grad": ok, "param-grad": ok},
             compare={"rows": [dict(row, name="output", kind="output", passed=True, message="")]}),
        dict(base, name="planted", status="mismatch", reason=f"1 of 8 tensors outside tolerance {EVIL}",
             errors={"output": ok, "input-grad": ok, "param-grad": dict(ok, max_abs_err=0.39, passed=False, failed=1)},
             compare={"rows": [row]}, training=TRAINING),
    ]


def demo_doc(tmp_path, capsys) -> Path:
    """The JSON of `recompat demo --no-run`, with demo_models() put in: no torch, no MindSpore."""
    dest = tmp_path / "demo"
    code, _, err = run(capsys, "demo", "-o", dest, "--no-run")
    assert code == 0, err
    path = dest / "report.json"
    doc = json.loads(path.read_text())
    doc["models"] = demo_models()
    doc["totals"].update(models=2, translated=2, ran=2, agree=1, mismatch=1)
    path.write_text(json.dumps(doc))
    return path


# --- the real pipeline ----------------------------------------------------------------------------------------


@pytest.mark.runtime
def test_demo_writes_both_reports_and_says_where(tmp_path, capsys):
    dest = tmp_path / "demo"
    code, out, err = run(capsys, "demo", "-o", dest, "--train-steps", "2")   # the default 20: below
    assert code == 0, err
    page, beside = dest / "report.html", dest / "report.json"
    assert page.is_file() and beside.is_file()
    assert f"report: {page}" in out and "model" in out and "result" in out
    assert "[1/3] translating" in err and "[3/3] writing the report" in err
    doc = json.loads(beside.read_text())
    assert doc["kind"] == "recompat-demo"
    names = [m["name"] for m in doc["models"]]
    assert names == ["mlp", "encoder", "densenet", "resnet", "trunk", "mixer", "convmixer"]
    for m in doc["models"]:
        assert m["status"] in ("agree", "mismatch", "failed", "not-translated"), m
        assert m["name"] in out
        assert m["files"], m          # each model knows the project files it is built from
        if m["status"] == "not-translated":   # the translation's verdict on its class (translator/verdicts.py)
            assert m["manual"] > 0 and " will not run: " in m["reason"] and ".py:" in m["reason"], m["reason"]
    assert model(doc, "mlp")["ran"], "its one manual site is in the file's __main__, which the model never runs"
    assert "tinynets/utils.py" in model(doc, "mixer")["files"]      # the wrapper it imports
    assert doc["settings"]["train_steps"] == 2 and "2 training steps" in out
    assert all(len(m["training"]["divergence"]) == 2 for m in doc["models"] if m["ran"])
    sites = doc["translation"]["summary"]["sites"]
    assert sites["total"] == sum(a["occurrences"] for a in doc["apis"]) > 0
    assert f"{sites['total']} API occurrences" in out
    text = page.read_text()
    assert "<script src" not in text and "<link" not in text and "Content-Security-Policy" in text
    assert "Files and sites" in text and "Models: torch with checkpointing" in text


@pytest.mark.runtime
def test_a_complete_translation_agrees_with_torch(tmp_path, capsys, monkeypatch):
    plant(monkeypatch, MLP_PORT)
    code, out, err = run(capsys, "demo", "-o", tmp_path / "demo", "--model", "mlp")
    assert code == 0, err
    m = model(json.loads((tmp_path / "demo" / "report.json").read_text()), "mlp")
    assert m["status"] == "agree", m["reason"]
    assert m["translated"] and m["ran"]
    # no buffers, no settings differ
    assert set(m["errors"]) == {"output", "input-grad", "param-grad", "memory", "training"}
    assert m["memory"]["mindspore"]["recompute"] < m["memory"]["mindspore"]["plain"]
    assert all(e["passed"] for e in m["errors"].values())
    assert "agree" in out and "20 training steps" in out
    t = m["training"]
    assert t["passed"] and t["steps"] == 20 and len(t["loss"]["MindSpore"]) == 20 and t["first_failure"] is None
    assert "mindspore.experimental.optim.sgd.SGD" in t["pieces"]["optimizer"]
    page = (tmp_path / "demo" / "report.html").read_text()
    assert 'data-chart="loss"' in page and 'data-chart="divergence"' in page


@pytest.mark.runtime
def test_a_port_that_agrees_for_one_step_but_trains_otherwise_is_a_mismatch(tmp_path, capsys, monkeypatch):
    """Planted: the MindSpore optimizer gets a learning rate 0.1% off (a conversion gone wrong). One forward and
    backward agree; the 20 training steps do not, from the first step, and the demo says so."""
    from recompat.compat import training

    real = training.settings

    def lr_off(entry, read):
        out = real(entry, read)
        return {k: v * 1.001 if k == "lr" else v for k, v in out.items()}
    monkeypatch.setattr(training, "settings", lr_off)
    plant(monkeypatch, MLP_PORT)
    code, out, err = run(capsys, "demo", "-o", tmp_path / "demo", "--model", "mlp")
    m = model(json.loads((tmp_path / "demo" / "report.json").read_text()), "mlp")
    assert code == 0 and m["status"] == "mismatch", m["reason"]
    assert all(m["errors"][k]["passed"] for k in ("output", "input-grad", "param-grad", "memory"))
    assert not m["errors"]["training"]["passed"] and m["training"]["first_failure"] == 1
    assert m["reason"].startswith("one step agrees, but training does not")
    assert "FAIL" in out


@pytest.mark.runtime
def test_a_dropped_bias_is_a_mismatch(tmp_path, capsys, monkeypatch):
    plant(monkeypatch, NO_BIAS)
    code, out, err = run(capsys, "demo", "-o", tmp_path / "demo", "--model", "mlp")
    assert code == 0, err                 # the pipeline ran: the mismatch is its finding, not an error
    m = model(json.loads((tmp_path / "demo" / "report.json").read_text()), "mlp")
    assert m["status"] == "mismatch" and m["ran"]
    assert not m["errors"]["output"]["passed"] and not m["errors"]["param-grad"]["passed"]
    failing = {r["name"] for r in m["compare"]["rows"] if not r["passed"]}
    assert {"output", "fc2.bias.grad"} <= failing
    found = m["compare"]["meta"]["localisation"]           # the rerun watched: fc2's weight used, fc2 never called
    assert found["uncalled"] == ["fc2"] and found["forward"]["torch_path"] == "fc3"
    assert "never called by MindSpore: fc2 -- torch calls it" in m["reason"]
    assert "first divergence, forward: fc3 [Linear / Dense]" in m["reason"]
    assert "mismatch" in out and "MISMATCH" in err
    assert "fc2.bias.grad" in (tmp_path / "demo" / "report.html").read_text()


@pytest.mark.runtime
def test_batchnorm_statistics_and_settings_are_judged(tmp_path, capsys, monkeypatch):
    """Planted: a translation that kept torch's momentum convention (MindSpore's is 1 - torch's). Training-mode
    outputs and gradients use the batch's statistics and agree; the running statistics after the step and the
    paired layers' settings do not, and the demo says so."""
    code, out, err = run(capsys, "demo", "-o", tmp_path / "right", "--model", "resnet", "--train-steps", "0")
    right = model(json.loads((tmp_path / "right" / "report.json").read_text()), "resnet")
    assert code == 0 and right["status"] == "agree", right["reason"]
    assert right["errors"]["buffer"]["passed"] and right["errors"]["buffer"]["total"] > 0
    edit_translation(monkeypatch, "tinynets/resnet.py",
                     lambda text: text.replace("nn.BatchNorm2d(planes)", "nn.BatchNorm2d(planes, momentum=0.1)"))
    code, out, err = run(capsys, "demo", "-o", tmp_path / "kept", "--model", "resnet", "--train-steps", "0")
    kept = model(json.loads((tmp_path / "kept" / "report.json").read_text()), "resnet")
    assert code == 0 and kept["status"] == "mismatch"
    assert kept["errors"]["output"]["passed"] and kept["errors"]["param-grad"]["passed"]
    assert not kept["errors"]["buffer"]["passed"] and not kept["errors"]["setting"]["passed"]
    failing = {r["name"] for r in kept["compare"]["rows"] if not r["passed"]}
    assert "layer1.0.bn1.momentum" in failing and "layer1.0.bn1.running_mean" in failing
    assert "momentum" in kept["reason"]
    assert "training" not in kept["errors"] and kept["training"] is None       # --train-steps 0: none


@pytest.mark.runtime
def test_a_translation_that_lost_its_recompute_mark_is_a_mismatch_on_memory(tmp_path, capsys, monkeypatch):
    """Planted: the translated convmixer without its Cell.recompute() marks computes the same numbers and saves
    nothing; the demo's memory row fails it and shows the bytes kept with and without recompute on both sides."""
    edit_translation(monkeypatch, "tinynets/convmixer.py",
                     lambda text: text.replace("self.blocks[i].recompute(", "(lambda **kw: None)("))
    code, out, err = run(capsys, "demo", "-o", tmp_path / "lost", "--model", "convmixer", "--train-steps", "0")
    m = model(json.loads((tmp_path / "lost" / "report.json").read_text()), "convmixer")
    assert code == 0 and m["status"] == "mismatch", m["reason"]
    assert m["errors"]["output"]["passed"] and m["errors"]["param-grad"]["passed"]
    (row,) = [r for r in m["compare"]["rows"] if r["name"] == "bytes kept for backward"]
    (regions,) = [r for r in m["compare"]["rows"] if r["name"] == "regions recomputed"]
    assert not regions["passed"] and "recompute mark lost there" in regions["message"]
    assert not row["passed"] and "recompute mark lost" in row["message"] and "0% on MindSpore" in row["message"]
    assert "memory kept for backward, most beyond torch's: " in m["reason"]
    kept = m["memory"]["mindspore"]
    assert kept["recompute"] == kept["plain"] and m["memory"]["torch"]["recompute"] < m["memory"]["torch"]["plain"]


@pytest.mark.runtime
def test_weights_that_do_not_pair_fail_at_the_transfer_stage(tmp_path, capsys, monkeypatch):
    """Planted: a translated head whose parameters have another name: the pair cannot be run, and the demo says
    the transfer is where it stopped."""
    edit_translation(monkeypatch, "tinynets/mixer.py",
                     lambda text: text.replace("self.head = nn.Dense(dim, num_classes)",
                                               "self.classifier = nn.Dense(dim, num_classes)")
                                      .replace("return self.head(x)", "return self.classifier(x)"))
    code, out, err = run(capsys, "demo", "-o", tmp_path / "demo", "--model", "mixer", "--train-steps", "0")
    m = model(json.loads((tmp_path / "demo" / "report.json").read_text()), "mixer")
    assert code == 0 and m["status"] == "failed" and m["stage"] == "transfer" and not m["ran"], m
    assert "WeightTransferError" in m["reason"]


@pytest.mark.runtime
def test_a_translation_that_does_not_import_is_reported_with_its_line(tmp_path, capsys, monkeypatch):
    plant(monkeypatch, BROKEN)
    code, out, err = run(capsys, "demo", "-o", tmp_path / "demo", "--model", "mlp")
    assert code == 0, err
    m = model(json.loads((tmp_path / "demo" / "report.json").read_text()), "mlp")
    assert m["status"] == "failed" and m["stage"] == "import" and not m["ran"]
    assert "SyntaxError" in m["reason"] and "tinynets/mlp.py:6" in m["reason"]


# --- bad input: pure text, before torch or MindSpore is loaded --------------------------------------------------


def test_an_output_that_is_a_file_is_a_clear_error(tmp_path, capsys):
    target = tmp_path / "taken"
    target.write_text("not a folder\n")
    code, out, err = run(capsys, "demo", "-o", target)
    assert code == 2
    assert f"-o {target}: exists and is not a folder" in err
    assert target.read_text() == "not a folder\n" and out == ""


def test_an_output_inside_the_examples_is_a_clear_error(capsys):
    inside = cli.examples_dir() / "ported"
    code, _, err = run(capsys, "demo", "-o", inside, "--no-run")
    assert code == 2
    assert "is inside the example project" in err
    assert not inside.exists()


def test_an_output_that_cannot_be_created_is_a_clear_error(tmp_path, capsys):
    (tmp_path / "file").write_text("x")
    code, _, err = run(capsys, "demo", "-o", tmp_path / "file" / "demo", "--no-run")
    assert code == 2
    assert "cannot create it" in err


def test_no_run_translates_and_reports_without_running(tmp_path, capsys):
    dest = tmp_path / "demo"
    code, out, err = run(capsys, "demo", "-o", dest, "--no-run")
    assert code == 0, err
    doc = json.loads((dest / "report.json").read_text())
    assert doc["models"] == [] and doc["settings"]["run"] is False
    assert (dest / "tinynets" / "mlp.py").is_file()
    assert "No model was run" in (dest / "report.html").read_text()
    assert f"report: {dest / 'report.html'}" in out


def test_model_with_no_run_is_a_usage_error(tmp_path, capsys):
    code, _, err = run(capsys, "demo", "-o", tmp_path / "demo", "--no-run", "--model", "mlp")
    assert code == 2 and "cannot be combined" in err


def test_the_report_renders_models_and_escapes_what_it_shows(tmp_path, capsys):
    src = demo_doc(tmp_path, capsys)
    page = tmp_path / "again.html"
    code, _, err = run(capsys, "report", src, "-o", page)
    assert code == 0, err
    text = page.read_text()
    assert EVIL not in text and "&lt;img src=x onerror=alert(1)&gt;" in text
    assert "fc2.bias.grad" in text and 'data-status="mismatch"' in text and 'data-status="agree"' in text
    assert "<details open><summary>outputs or gradients differ" in text       # a mismatch opens, an agreement not
    assert "<details><summary>outputs and gradients agree" in text
