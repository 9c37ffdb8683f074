"""The pytest plugin, record and replay, device skips and `recompat test`, as a user meets them."""
from __future__ import annotations

import json
import os
import re
import subprocess
import sys

import numpy as np
import pytest

from recompat.compat import suite
from recompat.compat.suite import Case, Options

pytest_plugins = ["pytester"]
pytestmark = pytest.mark.runtime

USER_TEST = '''
import numpy as np
import torch
from mindspore import nn

def test_my_dense(recompat_compare):
    torch.manual_seed(0)
    torch_model = torch.nn.Sequential(torch.nn.Linear(8, 4), torch.nn.Tanh())
    ms_model = nn.SequentialCell([nn.Dense(8, 4), nn.{ACT}()])
    x = np.random.default_rng(0).standard_normal((3, 8)).astype(np.float32)
    report = recompat_compare(torch_model, ms_model, [x], rtol=1e-4, atol=1e-5)
    assert report.passed, str(report)
'''


def test_a_user_pair_in_ten_lines_passes_and_lands_in_the_json(pytester):
    pytester.makepyfile(test_user=USER_TEST.replace("{ACT}", "Tanh"))
    result = pytester.runpytest_subprocess("--recompat-json", "out.json", "--recompat-ms-mode", "pynative")
    result.assert_outcomes(passed=1)
    data = json.loads((pytester.path / "out.json").read_text())
    (entry,) = data["results"]
    assert entry["status"] == "passed" and entry["check"] == "compare"
    assert {r["kind"] for r in entry["report"]["rows"]} == {"output", "input-grad", "param-grad"}


def test_a_user_pair_that_differs_fails_naming_the_tensors(pytester):
    pytester.makepyfile(test_user=USER_TEST.replace("{ACT}", "Sigmoid"))     # the planted difference
    result = pytester.runpytest_subprocess()
    result.assert_outcomes(failed=1)
    result.stdout.fnmatch_lines(["*output*FAIL*", "*torch vs mindspore: FAILED*"])


TRAIN_TEST = '''
import numpy as np
import pytest
import torch
from mindspore import nn


@pytest.mark.parametrize("smoothing", [0.0, 0.1])      # 0.1: the port below drops it
def test_my_training(recompat_train, smoothing):
    torch.manual_seed(0)
    torch_model = torch.nn.Sequential(torch.nn.Linear(8, 4))
    ms_model = nn.SequentialCell([nn.Dense(8, 4)])
    rng = np.random.default_rng(0)
    batches = [(rng.standard_normal((6, 8)).astype(np.float32), rng.integers(0, 4, 6)) for _ in range(3)]
    optimizer = torch.optim.SGD(torch_model.parameters(), lr=0.1, momentum=0.9)
    report = recompat_train(torch_model, ms_model, batches, steps=5,
                            loss=torch.nn.CrossEntropyLoss(label_smoothing=smoothing), optimizer=optimizer,
                            mindspore_loss=nn.CrossEntropyLoss())
    assert report.passed, str(report)
'''


def test_a_user_training_pair_is_judged_step_by_step_and_lands_in_the_json(pytester):
    pytester.makepyfile(test_user=TRAIN_TEST)
    result = pytester.runpytest_subprocess("--recompat-json", "out.json")
    result.assert_outcomes(passed=1, failed=1)
    result.stdout.fnmatch_lines(["*first left the tolerance at step 1*"])
    passed, failed = json.loads((pytester.path / "out.json").read_text())["results"]
    assert passed["check"] == failed["check"] == "training"
    assert (passed["status"], failed["status"]) == ("passed", "failed")
    assert passed["report"]["steps_run"] == 5 and len(passed["report"]["loss"]["torch"]) == 5
    assert failed["report"]["first_failure"] == 1 and "first out at step 1" in failed["message"]
    # recompat report draws both runs' curves, and lists what left the tolerance at the first failing step
    from recompat.reports import html

    page = html.render(json.loads((pytester.path / "out.json").read_text()))
    charts = re.findall(r'<svg [^>]*data-chart="([^"]+)"', page)
    assert charts == ["loss", "divergence"] * 2, charts
    assert page.count("first step out of tolerance") == 2              # the failing run's marker, in both charts
    assert re.search(r'<td class="mono">step 1: [^<]+</td>', page)


@pytest.mark.parametrize("args, message", [
    (["--recompat-record", "a", "--recompat-against", "b"], "*exclude each other*"),
    (["--recompat-against", "missing"], "*missing: no such directory*"),
])
def test_option_mistakes_are_usage_errors(pytester, args, message):
    pytester.makepyfile(test_user="def test_x(recompat_options):\n    pass\n")
    result = pytester.runpytest_subprocess(*args)
    assert result.ret == pytest.ExitCode.USAGE_ERROR
    result.stderr.fnmatch_lines([message])


def test_a_device_that_is_not_there_is_a_skip_with_its_reason():
    import torch

    if torch.cuda.is_available():
        pytest.skip("this machine has a GPU: the gpu cases run here")
    outcome = suite.run_case(Case("seed_fc", "torch-recompute", "checkpoint", "gpu", "-"))
    assert outcome.status == "skipped" and "torch.cuda.is_available() is False" in outcome.message
    outcome = suite.run_case(Case("seed_fc", "mindspore-recompute", "cell", "ascend", "pynative"))
    assert outcome.status == "skipped" and "no Ascend backend" in outcome.message


def test_unknown_devices_and_checks_are_named():
    with pytest.raises(ValueError, match=r"unknown device \['tpu'\]"):
        suite.cases(devices=["tpu"])
    with pytest.raises(ValueError, match=r"unknown check \['speed'\]"):
        suite.cases(checks=["speed"])


# --------------------------------------------------------------------------- record and replay

CROSS = Case("seed_fc", "cross", "recompute", "cpu", "pynative")


def test_record_then_replay_compares_mindspore_with_the_recorded_torch_run(tmp_path):
    import torch

    recorded = suite.run_case(CROSS, options=Options(record_dir=tmp_path))
    assert recorded.status == "passed", recorded.message
    meta = json.loads((tmp_path / "seed_fc-recompute.cpu.json").read_text())
    assert meta["meta"]["device"] == "cpu" and meta["meta"]["framework_version"] == torch.__version__
    replayed = suite.run_case(CROSS, options=Options(against_dir=tmp_path))
    assert replayed.status == "passed", replayed.message
    assert replayed.message.startswith("against torch recorded on cpu")


def test_replay_catches_a_recorded_run_that_differs(tmp_path):
    suite.run_case(CROSS, options=Options(record_dir=tmp_path))
    path = tmp_path / "seed_fc-recompute.cpu.npz"
    names = json.loads(path.with_suffix(".json").read_text())["names"]
    arrays = dict(np.load(path))
    key = f"t{names.index('fc3.weight.grad'):05d}"
    arrays[key] = arrays[key] + 1.0                   # as if the GPU run computed something else
    np.savez(path, **arrays)
    replayed = suite.run_case(CROSS, options=Options(against_dir=tmp_path))
    assert replayed.status == "failed" and "fc3.weight.grad" in replayed.message


def test_replay_refuses_weights_this_machine_does_not_build(tmp_path):
    suite.run_case(CROSS, options=Options(record_dir=tmp_path))
    weights = tmp_path / "seed_fc-recompute.cpu.weights.npz"
    arrays = dict(np.load(weights))
    arrays["fc1.bias"] = arrays["fc1.bias"] * 2
    np.savez(weights, **arrays)
    replayed = suite.run_case(CROSS, options=Options(against_dir=tmp_path))
    assert replayed.status == "failed" and "fc1.bias" in replayed.message and "same recompat and torch" in \
        replayed.message


def test_replay_without_a_record_is_a_skip_that_says_how_to_make_one(tmp_path):
    outcome = suite.run_case(CROSS, options=Options(against_dir=tmp_path))
    assert outcome.status == "skipped" and "--recompat-record" in outcome.message


# --------------------------------------------------------------------------- the suite's own verdicts

@pytest.mark.parametrize("pair", ["dropout", "dropout_functional"])
def test_the_cross_check_runs_dropout_pairs_in_training_mode_with_torchs_masks(pair):
    """In PyNative the cross check replays torch's dropout masks, so a pair with active dropout is compared in its
    own (training) mode."""
    outcome = suite.run_case(Case(pair, "cross", "recompute"))
    assert outcome.status == "passed", outcome.message
    row = outcome.report.row("dropout masks")
    assert row.passed and "MindSpore's forward took" in row.message
    assert outcome.report.meta["actual"]["training"] is True


def test_a_known_difference_that_vanished_fails_so_the_zoo_stays_true(monkeypatch):
    pair = suite.zoo.get("seed_fc")
    changed = suite.zoo.Pair(**{**pair.__dict__, "known_differences": {"mindspore:function": "imagined"}})
    monkeypatch.setitem(suite.zoo._REGISTRY, "seed_fc", changed)
    outcome = suite.run_case(Case("seed_fc", "mindspore-recompute", "function", "cpu", "pynative"))
    assert outcome.status == "failed" and "update the pair's known_differences" in outcome.message


def test_a_raising_run_is_a_failed_case_not_a_crash(monkeypatch):
    def broken(*args, **kwargs):
        raise RuntimeError("kernel exploded")

    monkeypatch.setattr(suite, "run_torch", broken)
    outcome = suite.run_case(Case("seed_fc", "torch-recompute", "checkpoint", "cpu", "-"))
    assert outcome.status == "failed" and "RuntimeError: kernel exploded" in outcome.message


def test_the_memory_check_reports_bytes_and_time_for_the_deep_chain():
    outcome = suite.run_case(Case("deep_sequential", "memory", "torch:checkpoint", "cpu", "-"))
    f = outcome.figures
    assert outcome.status == "passed", outcome.message
    assert f["plain_bytes"] > 1.5 * f["recompute_bytes"] > 0 and f["time_overhead"] > 0
    assert "saved-tensor hooks" in f["measure"]


# --------------------------------------------------------------------------- recompat test

def test_recompat_test_runs_the_suite_and_prints_the_table(tmp_path):
    out = tmp_path / "suite.json"
    proc = subprocess.run([sys.executable, "-m", "recompat", "test", "-q", "-k", "seed_fc and torch-recompute",
                           "--device", "cpu", "--json", str(out)], capture_output=True, text=True,
                          env={**os.environ, "GLOG_v": "3"}, timeout=300, cwd=tmp_path)
    assert proc.returncode == 0, proc.stdout[-3000:] + proc.stderr[-3000:]
    assert "recompat differential suite" in proc.stdout
    assert "seed_fc  torch-recompute  2" in proc.stdout
    assert json.loads(out.read_text())["totals"]["passed"] == 2
