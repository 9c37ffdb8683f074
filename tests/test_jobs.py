"""prove_job on a whole training script (tests/data/jobs/classifier.py) and its translation: a faithful port
passes, with gradient accumulation and with weights it loads from a converted file; each planted bug in the
translated job is caught where it shows (the loss of the step it first changes, the final weights, the live
tensors); a script that fails, stops early or cannot start is told as such."""
from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

from recompat.compat import jobs
from recompat.compat.jobs import JobError, prove_job

SCRIPT = Path(__file__).parent / "data" / "jobs" / "classifier.py"
STEPS = 8      # 2 epochs of 4 batches: the schedule halves the rate after step 4


@pytest.fixture(scope="module")
def port(tmp_path_factory) -> str:
    return jobs.translate_script(SCRIPT, tmp_path_factory.mktemp("port") / "ms").read_text()


def _planted(tmp_path, text: str, old: str, new: str) -> Path:
    assert text.count(old) == 1, f"the translation no longer has {old!r}: update the planted bug"
    path = tmp_path / "port.py"
    path.write_text(text.replace(old, new))
    return path


def _names(report) -> list[str]:
    return [row.name for row in report.failures]


def test_the_translated_job_trains_as_torchs_does_step_by_step():
    report = prove_job(SCRIPT, steps=STEPS, argv=["--epochs", "2", "--accumulate", "2"])
    assert report.passed, str(report)
    assert report.verdict.startswith("the round-off rule")
    assert [len(ls) for ls in report.runs[jobs.MINDSPORE].losses] == [2] * STEPS     # both micro-batches seen
    assert report.runs[jobs.MINDSPORE].copied == [True]
    curves = report.curves()
    assert len(curves[jobs.TORCH]) == len(curves[jobs.MINDSPORE]) == STEPS
    assert "step    1:" in str(report) and "live tensors per step" in str(report)


PLANTED = {
    # (what the port's text has, what the bug makes of it, the script's arguments, where it must show first)
    "accumulation lost: each micro-batch's gradients cleared before its backward": (
        "                backward(forward_fn, model, optimizer)",
        "                zero_grad(optimizer)\n                backward(forward_fn, model, optimizer)",
        ["--accumulate", "2"], "step 2 loss 1"),
    # AdamW's first update does not depend on the gradient's scale: clipping shows from the second one on
    "clipping not carried": ("            clip_grad_norm_(model.get_parameters(), args.clip)\n", "",
                             ["--clip", "0.05"], "step 3 loss"),
    "schedule stepped per batch instead of per epoch": (
        "            optimizer_step(optimizer)\n        schedule.step()",
        "            optimizer_step(optimizer)\n            schedule.step()", [], "step 3 loss"),
    "Adam's L2 penalty for AdamW's decoupled decay": ("optim.AdamW(", "optim.Adam(", [], "step 2 loss"),
}


@pytest.mark.parametrize("bug", list(PLANTED))
def test_a_planted_bug_in_the_translated_job_fails_from_the_step_it_changes(bug, port, tmp_path):
    old, new, argv, first = PLANTED[bug]
    report = prove_job(SCRIPT, _planted(tmp_path, port, old, new), steps=STEPS, argv=["--epochs", "2", *argv])
    assert not report.passed, bug
    assert _names(report)[0] == first, str(report)
    assert any(name.startswith("final ") for name in _names(report))
    # the faithful port with the same arguments passes: what failed is the bug
    assert prove_job(SCRIPT, steps=STEPS, argv=["--epochs", "2", *argv]).passed


def test_a_recompute_that_keeps_a_tensor_per_step_fails_the_memory_row(port, tmp_path):
    report = prove_job(SCRIPT, _planted(tmp_path, port, "early_stop=False", "early_stop=True"), steps=STEPS,
                       argv=["--epochs", "2"])
    assert _names(report) == ["live tensors per step"], str(report)
    row = report.failures[0]
    assert "early_stop=False" in row.message
    t, m = report.runs[jobs.TORCH].live, report.runs[jobs.MINDSPORE].live
    assert t[STEPS] == t[2] and m[STEPS] - m[2] >= 3 * (STEPS - 2)     # 3 blocks: 3 tensors a step


def _weight_files(folder: Path, port: Path, swap: bool) -> None:
    """net.pt with statistics that are not BatchNorm's initial ones, and net.ckpt converted from it by `recompat
    weights` (one block's mean and variance swapped with ``swap``)."""
    import mindspore
    import torch

    from recompat.compat import weight_files

    sys.path.insert(0, str(SCRIPT.parent))
    try:
        import classifier
    finally:
        sys.path.remove(str(SCRIPT.parent))
        sys.modules.pop("classifier", None)
    torch.manual_seed(1)
    net = classifier.Net(norm="batch")
    for block in net.blocks:
        block.norm.running_mean.uniform_(-1, 1)
        block.norm.running_var.uniform_(0.5, 2)
    torch.save(net.state_dict(), folder / "net.pt")
    report = weight_files.convert_file(folder / "net.pt", folder / "net.ckpt",
                                       weight_files.build_model(f"{port}:Net(norm='batch')"))
    assert report.ok, report.text()
    if swap:
        params = mindspore.load_checkpoint(str(folder / "net.ckpt"))
        mean, var = params["blocks.1.norm.moving_mean"], params["blocks.1.norm.moving_variance"]
        swapped = {**params, mean.name: var.asnumpy(), var.name: mean.asnumpy()}
        mindspore.save_checkpoint([{"name": k, "data": mindspore.Tensor(np.asarray(v.asnumpy() if hasattr(
            v, "asnumpy") else v))} for k, v in swapped.items()], str(folder / "net.ckpt"))


@pytest.mark.parametrize("swap", [False, True], ids=["converted", "statistics swapped"])
def test_weights_each_script_loads_are_judged_as_loaded(swap, port, tmp_path):
    path = tmp_path / "port.py"
    path.write_text(port)
    _weight_files(tmp_path, path, swap)
    argv = ["--epochs", "2", "--norm", "batch", "--load"]
    report = prove_job(SCRIPT, path, steps=4, argv=[*argv, "net.pt"], port_argv=[*argv, "net.ckpt"], cwd=tmp_path)
    assert report.runs[jobs.MINDSPORE].copied == [False]        # nothing copied: the port's own loading judged
    assert "as its script loads them" in str(report)
    if not swap:
        assert report.passed, str(report)
    else:    # training normalises by the batch's statistics: the swap shows in the running ones, and only there
        assert _names(report) == ["final blocks.1.norm.running_mean", "final blocks.1.norm.running_var"], str(report)


def test_a_port_that_fails_is_shown_with_its_error_and_the_steps_it_took(port, tmp_path):
    broken = _planted(tmp_path, port, "            optimizer_step(optimizer)\n",
                      "            optimizer_step(optimizer)\n            if batch == 2:\n"
                      "                raise ValueError('the port broke here')\n")
    report = prove_job(SCRIPT, broken, steps=STEPS, argv=["--epochs", "2"])
    assert _names(report)[0] == "MindSpore script"
    message = report.failures[0].message
    assert "after 3 of 8 steps" in message and "ValueError: the port broke here" in message
    assert str(broken) in message                                 # the frame in the port, not recompat's hooks
    assert report.runs[jobs.TORCH].steps == STEPS


def test_a_script_that_takes_no_step_is_told(tmp_path):
    script = tmp_path / "nothing.py"
    script.write_text("print('no training here')\n")
    report = prove_job(script, script, steps=3)
    assert not report.passed
    assert any("took no optimizer step" in row.message for row in report.failures)


@pytest.mark.parametrize("kwargs, message", [
    ({"script": "missing.py"}, "missing.py: no such script"),
    ({"steps": 0}, "steps must be a positive int"),
    ({"port": "nowhere.py"}, "nowhere.py: no such script"),
    ({"to": "paddle"}, "to must be one of mindspore, torch, not 'paddle'"),
])
def test_a_job_that_cannot_start_is_refused_before_anything_runs(kwargs, message):
    with pytest.raises(JobError, match=message):
        prove_job(**{"script": SCRIPT, **kwargs})


def test_the_command_prints_the_verdict_and_writes_the_report(tmp_path):
    out = tmp_path / "job.html"
    done = subprocess.run([sys.executable, "-m", "recompat", "job", str(SCRIPT), "--steps", "3", "--report",
                           str(out), "--", "--epochs", "1", "--batches", "3"],
                          capture_output=True, text=True, timeout=600)
    assert done.returncode == 0, done.stderr + done.stdout
    assert "PASSED" in done.stdout and "torch: 3 steps" in done.stderr
    page = out.read_text()
    assert "<svg" in page and "float64" in page
    doc = json.loads(out.with_suffix(".json").read_text())
    assert doc["kind"] == "recompat-job" and doc["passed"] and doc["runs"]["MindSpore"]["steps"] == 3


HAND = Path(__file__).parent / "data" / "jobs"


def test_a_port_written_by_hand_the_mindspore_way_is_judged_too(tmp_path):
    """value_and_grad and optimizer(grads) in the port, no recompat in it: the steps, losses and models are seen
    where MindSpore code has them."""
    report = prove_job(HAND / "regressor.py", HAND / "regressor_ms.py", steps=6)
    assert report.passed, str(report)
    assert report.runs[jobs.MINDSPORE].steps == 6 and [len(ls) for ls in report.runs[jobs.MINDSPORE].losses] == [1] * 6
    planted = tmp_path / "regressor_ms.py"
    planted.write_text((HAND / "regressor_ms.py").read_text().replace("momentum=0.9", "momentum=0.8"))
    report = prove_job(HAND / "regressor.py", planted, steps=6)
    assert _names(report)[0] == "step 3 loss", str(report)      # momentum shows from the second update on


def test_a_job_with_loss_scaling_passes_and_one_that_steps_past_the_scaler_fails(tmp_path):
    """GradScaler and autocast translated (recompat.runtime's): the overflowing step is skipped on both sides,
    its inf loss the same on both; a port that steps the optimizer itself takes that step and fails. float64
    never overflows, so fixed tolerances judge, and the verdict says why."""
    script = HAND / "scaled.py"
    report = prove_job(script, steps=8)
    assert report.passed, str(report)
    assert "a loss scaler's overflow" in report.verdict
    losses = report.runs[jobs.MINDSPORE].losses
    assert len(losses[4]) == 2 and not np.isfinite(losses[4][0])       # the skipped step's loss goes to the next
    port = jobs.translate_script(script, tmp_path / "ms").read_text()
    planted = _planted(tmp_path, port.replace("from recompat.runtime import ", "from recompat.runtime import "
                                              "optimizer_step, "), "    scaler.step(optimizer)",
                       "    optimizer_step(optimizer)")
    report = prove_job(script, planted, steps=8)
    assert _names(report)[0] == "step 5 loss", str(report)
    assert "takes a step torch skips" in report.failures[0].message


@pytest.mark.parametrize("args, message", [
    (["--report", "job.json"], "names the page, not its JSON"),
    (["--steps", "0"], "steps must be a positive int"),
    (["--port", "nowhere.py"], "nowhere.py: no such script"),
])
def test_the_command_refuses_bad_input_with_exit_2_before_anything_runs(args, message, tmp_path, capsys):
    from recompat.cli import main

    assert main(["job", str(SCRIPT), *args]) == 2
    err = capsys.readouterr().err
    assert message in err and "running" not in err
    assert not list(tmp_path.iterdir())


# ------------------------------------------------------------------ MindSpore -> torch: the MindSpore script proven

MS_SCRIPT = HAND / "stepper_ms.py"


@pytest.fixture(scope="module")
def torch_port(tmp_path_factory) -> str:
    return jobs.translate_script(MS_SCRIPT, tmp_path_factory.mktemp("port") / "torch", to="torch").read_text()


def test_a_mindspore_script_and_its_torch_translation_train_alike():
    """value_and_grad with has_aux, a clip, the optimizer inside ops.depend, under @mindspore.jit (run eagerly to
    be watched): the translated torch loop takes the same steps to the same losses and weights."""
    report = prove_job(MS_SCRIPT, to="torch", steps=8)
    assert report.passed, str(report)
    assert report.verdict.startswith("the round-off rule")
    assert report.to == "torch" and report.mindspore_script == str(MS_SCRIPT)
    assert report.torch_script == "stepper_ms.py translated"
    assert report.runs[jobs.MINDSPORE].steps == report.runs[jobs.TORCH].steps == 8
    assert [len(ls) for ls in report.runs[jobs.MINDSPORE].losses] == [1] * 8
    assert report.to_dict()["to"] == "torch"


TORCH_PLANTED = {
    # (what the torch port has, what the bug makes of it, where it must show first)
    # the first backward() finds no .grad to add to: step 2's update is the first to change
    "zero_grad() lost: torch's .grad accumulates across steps": ("    optimizer.zero_grad()\n", "", "step 3 loss"),
    "clipping lost": ("    nn.utils.clip_grad_norm_(", "    dict(clipped=", "step 2 loss"),
    "schedule stepped per batch instead of per epoch": (
        "        loss = train_step(x, target)\n", "        loss = train_step(x, target)\n        schedule.step()\n",
        "step 3 loss"),
}


@pytest.mark.parametrize("bug", list(TORCH_PLANTED))
def test_a_planted_bug_in_the_torch_port_fails_from_the_step_it_changes(bug, torch_port, tmp_path):
    old, new, first = TORCH_PLANTED[bug]
    report = prove_job(MS_SCRIPT, _planted(tmp_path, torch_port, old, new), to="torch", steps=8)
    assert not report.passed, bug
    assert _names(report)[0] == first, str(report)


def test_the_command_proves_a_mindspore_script_with_to_torch(tmp_path):
    from recompat.cli import main

    out = tmp_path / "job.json"
    assert main(["job", str(MS_SCRIPT), "--to", "torch", "--steps", "3", "--json", str(out), "-q"]) == 0
    doc = json.loads(out.read_text())
    assert doc["to"] == "torch" and doc["mindspore_script"] == str(MS_SCRIPT) and doc["passed"]
