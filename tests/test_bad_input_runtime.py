"""Bad input to compare() and to the pytest plugin, as a user meets it: the verdict or the error says what is wrong
and where (which tensor, which side, which file or option), never a crash without a name or a silent pass.

tests/test_compare.py already covers compare_results on hand-made runs (NaN, Inf, shape, dtype, one-sided rows) and
passing tuple/dict outputs; tests/test_plugin.py covers --recompat-record with --recompat-against, a missing
--recompat-against folder, and a recorded array edited. This file feeds the same mistakes through compare() with real
models, and the plugin its other bad options and damaged records.
"""
from __future__ import annotations

import json
import shutil

import numpy as np
import pytest

torch = pytest.importorskip("torch")
ms = pytest.importorskip("mindspore")
from mindspore import nn, ops  # noqa: E402

from recompat.compat import suite  # noqa: E402
from recompat.compat.compare import ModelRunError, compare  # noqa: E402
from recompat.compat.suite import Case, Options  # noqa: E402

pytest_plugins = ["pytester"]
pytestmark = pytest.mark.runtime


@pytest.fixture(autouse=True)
def _mindspore_pynative():
    ms.set_context(mode=ms.PYNATIVE_MODE)   # process-global: set what these tests need
    yield


def _x(*shape, seed=1):
    return np.random.default_rng(seed).standard_normal(shape).astype(np.float32)


class TorchFn(torch.nn.Module):
    """A torch model with no parameters, its forward a function of x."""

    def __init__(self, fn):
        super().__init__()
        self.fn = fn

    def forward(self, x):
        return self.fn(x)


class MsFn(nn.Cell):
    def __init__(self, fn):
        super().__init__()
        self.fn = fn

    def construct(self, x):
        return self.fn(x)


# --- NaN and Inf: a failing verdict that says so ------------------------------------------------------------------

def test_nan_on_both_sides_fails_and_says_how_it_would_pass():
    report = compare(TorchFn(torch.log), MsFn(ops.log), [_x(3, 4)])    # log of negatives: NaN in the same places
    assert not report.passed
    assert "NaN/Inf in output" in report.summary()
    assert "the same on both sides; they pass only with equal_nan=True" in report.row("output").message
    assert "output" in str(report) and "FAILED" in str(report)
    assert compare(TorchFn(torch.log), MsFn(ops.log), [_x(3, 4)], equal_nan=True).passed


def test_inf_in_outputs_and_gradients_is_named_in_the_verdict():
    report = compare(TorchFn(lambda x: x / 0.0), MsFn(lambda x: x / 0.0), [_x(3, 4)])
    assert not report.passed
    summary = report.summary()
    assert "NaN/Inf in output, input[0].grad" in summary, summary
    assert "largest abs error 0" in summary, "the statistics are over the finite places; the names say why it failed"


def test_nan_on_one_side_only_never_passes():
    report = compare(TorchFn(lambda x: x * 2), MsFn(lambda x: ops.log(x) * 0 + x * 2), [_x(3, 4)], equal_nan=True)
    assert not report.passed
    assert "non-finite values not matched" in report.row("output").message
    assert "NaN 0 expected vs" in report.row("output").message


# --- shapes, dtypes, counts, structure: each a named failing row --------------------------------------------------

MISMATCHES = {
    "shape": (lambda x: x * 2, lambda x: (x * 2).reshape(4, 3), "output", "shape mismatch for output"),
    "dtype": (lambda x: x * 2, lambda x: (x * 2).astype(ms.float16), "output", "dtype mismatch for output"),
    "count": (lambda x: x * 2, lambda x: (x * 2, x * 3), "output[1]", "missing in torch"),
    "none": (lambda x: x * 2, lambda x: None, "output", "missing in mindspore"),
    "dict key": (lambda x: {"a": x, "b": x * 2}, lambda x: {"a": x, "c": x * 2}, "output.b", "missing in mindspore"),
}


@pytest.mark.parametrize("case", list(MISMATCHES))
def test_a_mismatch_is_a_failing_row_that_names_the_tensor(case):
    t, m, row, says = MISMATCHES[case]
    report = compare(TorchFn(t), MsFn(m), [_x(3, 4)])
    assert not report.passed
    assert says in report.row(row).message, str(report)
    assert row in str(report)


def test_dict_keys_in_another_order_and_a_list_for_a_tuple_still_agree():
    t = TorchFn(lambda x: ({"a": x * 2, "b": x + 1}, x))
    m = MsFn(lambda x: [{"b": x + 1, "a": x * 2}, x])
    report = compare(t, m, [_x(3, 4)])
    assert report.passed, str(report)
    assert sorted(r.name for r in report.rows if r.kind == "output") == ["output[0].a", "output[0].b", "output[1]"]


@pytest.mark.parametrize("ms_mode", ["pynative", "graph"])
def test_models_without_parameters_are_compared(ms_mode):
    report = compare(TorchFn(torch.tanh), MsFn(ops.tanh), [_x(3, 4)], ms_mode=ms_mode)
    assert report.passed, str(report)
    assert [r.name for r in report.rows] == ["output", "input[0].grad"]


def test_models_that_return_no_tensor_do_not_pass_silently():
    """Nothing returned: no cotangent, every gradient a zero fill on both sides -- that agreement proves nothing."""
    class T(torch.nn.Module):
        def __init__(self):
            super().__init__()
            self.fc = torch.nn.Linear(4, 4)

        def forward(self, x):
            self.fc(x)
            return None

    class M(nn.Cell):
        def __init__(self):
            super().__init__()
            self.fc = nn.Dense(4, 4)

        def construct(self, x):
            self.fc(x)
            return None

    report = compare(T(), M(), [_x(3, 4)])
    assert not report.passed
    assert "neither model returned a tensor" in report.row("output").message
    assert "neither model returned a tensor" in str(report)


# --- a forward that raises: which side ----------------------------------------------------------------------------

class TorchRaises(torch.nn.Module):
    def forward(self, x):
        raise ValueError("torch forward broke")


class MsRaises(nn.Cell):
    def construct(self, x):
        raise ValueError("mindspore construct broke")


@pytest.mark.parametrize("ms_mode", ["pynative", "graph"])
def test_a_raising_forward_names_the_side_and_the_model(ms_mode, monkeypatch, tmp_path):
    monkeypatch.chdir(tmp_path)   # GRAPH mode may write analyze_fail.ir into the working folder
    with pytest.raises(ModelRunError) as caught:
        compare(TorchRaises(), MsFn(ops.tanh), [_x(3, 4)], ms_mode=ms_mode)
    assert caught.value.side == "torch"
    assert str(caught.value).startswith("the torch model (TorchRaises) raised ValueError: torch forward broke")
    assert "the MindSpore side was not run" in str(caught.value)
    assert isinstance(caught.value.__cause__, ValueError)
    with pytest.raises(ModelRunError) as caught:
        compare(TorchFn(torch.tanh), MsRaises(), [_x(3, 4)], ms_mode=ms_mode)
    assert caught.value.side == "MindSpore"
    assert "the MindSpore model (MsRaises) raised ValueError: mindspore construct broke" in str(caught.value)
    assert ms.get_context("mode") == ms.PYNATIVE_MODE, "the mode is restored after a run that raised"
    # and the next comparison in this process is not disturbed by the one that raised
    assert compare(TorchFn(torch.tanh), MsFn(ops.tanh), [_x(3, 4)]).passed


def test_a_bad_inputs_argument_is_the_callers_error_not_a_models():
    with pytest.raises(TypeError, match="inputs must be a list of NumPy arrays or a dict of them, not int"):
        compare(TorchFn(torch.tanh), MsFn(ops.tanh), 5)
    with pytest.raises(ValueError, match=r"grad_inputs \['7'\] name no input"):
        compare(TorchFn(torch.tanh), MsFn(ops.tanh), [_x(3, 4)], grad_inputs=[7])


# --- the plugin: option values and paths --------------------------------------------------------------------------

@pytest.mark.parametrize("args, message", [
    (["--recompat-device", "tpu"], "*--recompat-device: invalid choice: 'tpu' (choose from 'cpu', 'gpu', 'ascend')*"),
    (["--recompat-ms-mode", "eager"], "*--recompat-ms-mode: invalid choice: 'eager'*"),
    (["--recompat-json", "."], "*--recompat-json .: is a directory — name the JSON file to write*"),
    (["--recompat-json", "afile/out.json"], "*--recompat-json afile/out.json: */afile is a file, not a directory*"),
    (["--recompat-record", "afile"], "*--recompat-record afile: exists and is not a directory*"),
    (["--recompat-record", "afile/runs"], "*--recompat-record afile/runs: */afile is a file, not a directory*"),
    (["--recompat-against", "afile"], "*--recompat-against afile: not a directory*"),
])
def test_bad_option_values_are_usage_errors_that_name_them(pytester, args, message):
    pytester.makepyfile(test_user="def test_x(recompat_options):\n    pass\n")
    (pytester.path / "afile").write_text("not a folder\n")
    result = pytester.runpytest_subprocess(*args)
    assert result.ret == pytest.ExitCode.USAGE_ERROR
    result.stderr.fnmatch_lines([message])
    assert (pytester.path / "afile").read_text() == "not a folder\n"


def test_a_json_path_that_cannot_be_written_at_the_end_is_an_error_line_not_a_crash(pytester):
    # the test itself takes the name: what a full disk or another process would do between start and end
    pytester.makepyfile(test_user="""
        import os

        def test_x(recompat_compare):
            import numpy as np, torch
            from mindspore import nn
            os.mkdir("out.json")
            recompat_compare(torch.nn.Tanh(), nn.Tanh(), [np.ones((2, 3), np.float32)])
    """)
    result = pytester.runpytest_subprocess("--recompat-json", "out.json", "--recompat-ms-mode", "pynative")
    result.stdout.fnmatch_lines(["*recompat: error: --recompat-json out.json: cannot write it*not saved*"])
    assert "INTERNALERROR" not in result.stdout.str() + result.stderr.str()
    assert result.ret == pytest.ExitCode.INTERNAL_ERROR
    assert list((pytester.path / "out.json").iterdir()) == []


# --- the plugin: --recompat-against with damaged or edited records ------------------------------------------------

CROSS = Case("seed_fc", "cross", "recompute", "cpu", "pynative")
STEM = "seed_fc-recompute.cpu"


@pytest.fixture(scope="module")
def recorded(tmp_path_factory):
    folder = tmp_path_factory.mktemp("recorded")
    outcome = suite.run_case(CROSS, options=Options(record_dir=folder))
    assert outcome.status == "passed", outcome.message
    return folder


def _edit_json(change):
    def edit(folder):
        path = folder / f"{STEM}.json"
        doc = json.loads(path.read_text())
        change(doc)
        path.write_text(json.dumps(doc))
    return edit


def _truncate(name):
    def edit(folder):
        path = folder / name
        path.write_bytes(path.read_bytes()[: path.stat().st_size // 2])
    return edit


def _drop_array(folder):
    path = folder / f"{STEM}.npz"
    arrays = dict(np.load(path))
    del arrays["t00003"]
    np.savez(path, **arrays)


# edit -> (the file the message names, what it says)
TAMPERED = {
    "json truncated": (_truncate(f"{STEM}.json"), f"{STEM}.json", "cannot read this recorded run"),
    "json not an object": (lambda f: (f / f"{STEM}.json").write_text("[1, 2]"), f"{STEM}.json",
                           "unknown recorded-run format 'list'"),
    "json without framework": (_edit_json(lambda d: d.pop("framework")), f"{STEM}.json", "not a recorded run"),
    "json names and kinds differ in length": (_edit_json(lambda d: d["kinds"].append("output")), f"{STEM}.json",
                                              "of one length"),
    "json unknown kind": (_edit_json(lambda d: d["kinds"].__setitem__(0, "weird")), f"{STEM}.json",
                          "not 'weird'"),
    "json a name twice": (_edit_json(lambda d: d["names"].__setitem__(1, "output")), f"{STEM}.json",
                          "'output' captured twice"),
    "json missing": (lambda f: (f / f"{STEM}.json").unlink(), f"{STEM}.json", "No such file"),
    "npz truncated": (_truncate(f"{STEM}.npz"), f"{STEM}.npz", "cannot read these recorded arrays"),
    "npz without an array": (_drop_array, f"{STEM}.npz", "holds no array for 'fc1.bias.grad'"),
    "weights truncated": (_truncate(f"{STEM}.weights.npz"), f"{STEM}.weights.npz", "--recompat-record"),
    "weights missing": (lambda f: (f / f"{STEM}.weights.npz").unlink(), f"{STEM}.weights.npz", "No such file"),
}


@pytest.mark.parametrize("tampering", list(TAMPERED))
def test_a_damaged_record_fails_the_case_naming_the_file(recorded, tmp_path, tampering):
    edit, name, says = TAMPERED[tampering]
    folder = tmp_path / "against"
    shutil.copytree(recorded, folder)
    edit(folder)
    outcome = suite.run_case(CROSS, options=Options(against_dir=folder))
    assert outcome.status == "failed"
    assert str(folder / name) in outcome.message and says in outcome.message, outcome.message
    assert "record" in outcome.message, "says what to do: record again"


def test_an_edited_dtype_in_the_record_is_a_failing_row(recorded, tmp_path):
    folder = tmp_path / "against"
    shutil.copytree(recorded, folder)
    _edit_json(lambda d: d["dtypes"].__setitem__(0, "float16"))(folder)
    outcome = suite.run_case(CROSS, options=Options(against_dir=folder))
    assert outcome.status == "failed"
    assert "dtype mismatch for output: torch float32 vs torch recorded on cpu float16" in outcome.message


class _TorchConvBN(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.conv, self.bn = torch.nn.Conv2d(3, 4, 3), torch.nn.BatchNorm2d(4)

    def forward(self, x):
        return self.bn(self.conv(x))


class _MsConvBN(nn.Cell):
    def __init__(self):
        super().__init__()
        self.conv = nn.Conv2d(3, 4, 3, pad_mode="valid", has_bias=True)
        self.bn = nn.BatchNorm2d(4, eps=1e-5, momentum=0.9)

    def construct(self, x):
        return self.bn(self.conv(x))


def test_a_pair_in_different_modes_with_batchnorm_is_refused_naming_the_layer():
    """An nn.Module starts in training mode, a Cell in evaluation mode: with BatchNorm the two sides then compute
    different things, and a pass or a fail says nothing about the port."""
    torch_model, ms_model = _TorchConvBN(), _MsConvBN()
    with pytest.raises(ValueError, match=r"training mode and the MindSpore one \(_MsConvBN\) in evaluation mode, "
                                         r"and BatchNorm2d computes differently .* cell.set_train\(True\)"):
        compare(torch_model, ms_model, [_x(2, 3, 6, 6)])
    ms_model.set_train(True)
    assert compare(torch_model, ms_model, [_x(2, 3, 6, 6)], rtol=1e-4, atol=1e-4).passed


def test_modes_that_differ_without_a_layer_that_cares_are_no_error():
    torch_model, ms_model = TorchFn(torch.tanh), MsFn(ops.tanh)
    assert torch_model.training and not ms_model.training
    assert compare(torch_model, ms_model, [_x(3, 4)]).passed
