"""Domain probes (recompat.compat.domain): each function and Tensor-method entry tried over the inputs real code
passes, through the translator, on both frameworks; what they find is recorded (mappings/domain.json) and the
translator says it at every converted call (RC327).

Planted bugs show the probes can fail: a MindSpore method made wrong on one dtype, or on one edge class, is caught
there and nowhere else. The MindSpore behaviours the probes found are pinned here too (docs/behaviours.md), so a
release that changes one is noticed.
"""
from __future__ import annotations

import dataclasses
import json
import os
import signal
import subprocess
import sys

os.environ.setdefault("GLOG_v", "3")

import numpy as np
import pytest

import mindspore as ms
import torch

from recompat import mappings
from recompat.compat import domain
from recompat.translator.translate import translate_bytes

pytestmark = pytest.mark.runtime


@pytest.fixture(scope="module")
def maps():
    return mappings.default()


@pytest.fixture(scope="module")
def runner():
    return domain.Runner()


@pytest.fixture
def pynative():
    ms.set_context(mode=ms.PYNATIVE_MODE)


def entry(maps, entry_id):
    return next(e for e in (*maps.entries, *maps.table) if e.id == entry_id)


# -- the parts generated ------------------------------------------------------------------------------------------

def test_the_parts_cover_dtypes_edges_shapes_and_keyword_forms(maps, runner):
    parts = {c.part: c for c in domain.cases(entry(maps, "tensor_any"), runner.specs)}
    assert {"float32", "float16", "float64", "int32", "int64", "bool"} <= set(parts)
    assert {"zeros and -0", "infinities", "nan", "a row all -inf", "equal values", "halves", "exact 0 and 1",
            "large magnitudes", "small magnitudes", "negative integers", "an empty dim", "a size-1 dim"} <= set(parts)
    assert parts["dim=0"].call == "t0.any(dim=0)"
    assert parts["dim by place"].call == "t0.any(0)"
    assert parts["dim=-1"].call == "t0.any(dim=-1)"
    assert parts["dim=(0, 1)"].call == "t0.any(dim=(0, 1))"
    assert parts["keepdim=True"].call == "t0.any(keepdim=True)"
    assert parts["int64"].tensors[0].dtype == np.int64
    assert np.isnan(parts["nan"].tensors[0]).sum() == 1
    assert np.isneginf(parts["a row all -inf"].tensors[0][0]).all()
    assert np.isfinite(parts["a row all -inf"].tensors[0][1:]).all()
    assert parts["an empty dim"].tensors[0].shape == (0, 3)


@pytest.mark.parametrize("m, ref, differs", [
    ([0.0, 1.0], [5.0, 1.0], False),        # torch's float32 overflowed where float64 is finite: not judged there
    ([0.0, 1.0], [np.nan, 1.0], True),      # NaN in float64 too: MindSpore must give NaN
    ([np.nan, np.inf], [5.0, 1.0], True)])  # MindSpore non-finite where torch is finite: judged
def test_a_place_where_torch_itself_overflows_is_not_held_against_mindspore(m, ref, differs):
    t = np.array([np.nan, 1.0], np.float32)
    judged = lambda: domain._judge("the output", t, np.array(m, np.float32), np.array(ref))  # noqa: E731
    if differs:
        with pytest.raises(domain._Differs):
            judged()
    else:
        judged()


def test_a_second_tensor_gets_its_own_edges_and_a_mixed_dtype(maps, runner):
    parts = {c.part for c in domain.cases(entry(maps, "torch_add"), runner.specs)}
    assert {"nan in input", "nan in other", "float32 with int64", "float16 with float32"} <= parts


def test_a_varargs_size_is_tried_spread_and_as_one_tuple(maps, runner):
    calls = {c.part: c.call for c in domain.cases(entry(maps, "torch_zeros"), runner.specs)}
    assert calls["float32"] == "torch.zeros(2, 3)"
    assert calls["size as one tuple"] == "torch.zeros((2, 3))"


def test_a_layer_is_built_from_its_constructors_forms_and_called_on_its_forward_inputs(maps, runner):
    parts = {c.part: c for c in domain.cases(entry(maps, "linear"), runner.specs)}
    assert all(c.layer for c in parts.values())
    assert parts["float32"].call == "torch.nn.Linear(3, 4)"
    assert parts["bias=False"].call == "torch.nn.Linear(3, 4, bias=False)"
    assert parts["in_features= by keyword"].call == "torch.nn.Linear(out_features=4, in_features=3)"
    assert {"float16", "nan", "a row all -inf", "an empty dim"} <= set(parts)
    assert "layer_0 = torch.nn.Linear(3, 4)\ndef case_0(t0):\n    return layer_0(t0)" in domain.module_text(
        list(parts.values()))


def test_a_layers_parameters_are_given_torchs_and_their_gradients_judged(maps, runner, monkeypatch, pynative):
    """MindSpore's Dense made to double its weight's gradient, its values and its input's gradient right: caught
    in the weight's gradient only (the layers' weights are torch's, so a right layer agrees)."""
    # on an empty batch MindSpore's weight gradient is whatever its memory held (a finding of its own, recorded)
    assert set(runner.probe_entry(entry(maps, "linear")).differing()) <= {"an empty dim"}

    def planted(self, x):   # 2-D input, as the probe's: x @ w.T + b, w's gradient doubled
        w = self.weight * 2 - ms.ops.stop_gradient(self.weight)
        out = ms.ops.matmul(x, w.T)
        return out + self.bias if self.has_bias else out

    monkeypatch.setattr(ms.nn.Dense, "construct", planted)
    found = runner.probe_entry(entry(maps, "linear"))
    assert "the gradient of weight" in found.parts["float32"]
    assert "the output" not in found.parts["float32"]


def test_containers_and_non_layers_are_not_probed_and_say_why(maps, runner):
    assert "no forward of its own" in runner.probe_entry(entry(maps, "module_list")).reason
    assert "is no layer" in runner.probe_entry(entry(maps, "tensor_class")).reason


def test_an_entry_without_inputs_for_a_parameter_is_not_probed_and_says_why(maps, runner):
    e = entry(maps, "tensor_any")
    odd = dataclasses.replace(e, torch={**e.torch, "signature": "any(frobnicate, dim=None)"})
    found = runner.probe_entry(odd)
    assert not found.parts and "frobnicate" in found.reason and "probes.yaml" in found.reason


# -- the issue's three silent differences, found ------------------------------------------------------------------

def _mindsporess_own(maps, entry_id: str, own_id: str):
    """The maps with entry `entry_id` (translated to recompat.runtime) translated instead to MindSpore's own API, as
    the reverse entry `own_id` pairs them: what the translation was before the probes found the difference."""
    own = dataclasses.replace(entry(maps, own_id), id=entry_id, source="torch")
    return dataclasses.replace(maps, entries=tuple(own if e.id == entry_id else e for e in maps.entries
                                                   if e.id != own_id))


@pytest.mark.parametrize("entry_id, own_id, part, found_there", [
    ("tensor_any", "ms_tensor_any", "zeros and -0", "differs: the output"),
    ("f_softmax", "ms_softmax", "a row all -inf", "torch gives nan, MindSpore 0.0"),
    ("tensor_logsumexp", "ms_tensor_logsumexp", "a row all -inf", "torch gives -inf, MindSpore nan"),
    ("softmax", "ms_nn_softmax", "a row all -inf", "torch gives nan, MindSpore 0.0")])
def test_mindsporess_own_function_is_found_wrong_and_the_runtimes_agrees(maps, pynative, entry_id, own_id, part,
                                                                         found_there):
    before = domain.Runner(maps=_mindsporess_own(maps, entry_id, own_id)).probe_entry(
        entry(_mindsporess_own(maps, entry_id, own_id), entry_id))
    assert before.parts["float32"] == "agrees" and found_there in before.parts[part]
    now = domain.Runner(maps=maps).probe_entry(entry(maps, entry_id))
    assert not now.differing() and now.parts[part] == "agrees"


def test_an_entry_right_everywhere_agrees_over_its_whole_domain(maps, runner, pynative):
    found = runner.probe_entry(entry(maps, "tensor_abs"))
    assert len(found.parts) > 15 and set(found.parts.values()) == {"agrees"}


# -- planted bugs: the probes can fail where, and only where, the counterpart is wrong ------------------------------

def _planted(monkeypatch, wrong):
    """MindSpore's Tensor.abs made wrong where `wrong(input)` says so (by 1, a value no round-off explains)."""
    right = ms.Tensor.abs

    def planted(self):
        out = right(self)
        return out + 1 if wrong(self) else out

    monkeypatch.setattr(ms.Tensor, "abs", planted)


def test_a_counterpart_wrong_on_one_dtype_is_caught_on_that_dtype_only(maps, runner, monkeypatch, pynative):
    _planted(monkeypatch, lambda x: x.dtype == ms.int64)
    found = runner.probe_entry(entry(maps, "tensor_abs"))
    assert set(found.differing()) == {"int64", "negative integers"}


def test_a_counterpart_wrong_on_one_edge_class_is_caught_on_that_class_only(maps, runner, monkeypatch, pynative):
    _planted(monkeypatch, lambda x: bool(ms.ops.isinf(x).any()) if x.dtype in (ms.float16, ms.float32,
                                                                                ms.float64) else False)
    found = runner.probe_entry(entry(maps, "tensor_abs"))
    assert set(found.differing()) == {"infinities", "a row all -inf"}


def test_a_gradient_that_differs_is_caught(maps, runner, monkeypatch, pynative):
    right = ms.Tensor.abs

    def planted(self):   # the right values, a gradient scaled by 2
        return right(self) * 2 - ms.ops.stop_gradient(right(self))

    monkeypatch.setattr(ms.Tensor, "abs", planted)
    found = runner.probe_entry(entry(maps, "tensor_abs"))
    assert "the gradient of t0" in found.parts["float32"]


# -- the record and the translator ----------------------------------------------------------------------------------

def test_every_probed_entry_has_a_record(maps):
    record = domain.recorded()
    missing = [e.id for e in domain.probed_entries(maps) if e.id not in record]
    assert not missing, f"no domain record for {missing}: run `recompat prove`"


def test_every_agreeing_table_row_is_probed_as_its_own_pair_where_no_entry_is(maps):
    record = domain.recorded()
    rows = domain.row_pairs(maps)
    assert len(rows) > 50 and not [r.id for r in rows if r.id not in record], "run `recompat prove`"
    assert not [k for k in record if k.startswith(domain.ROW) and k not in {r.id for r in rows}], \
        "records of rows an entry now takes: run `recompat prove`"


def test_a_table_rows_own_call_is_probed_and_the_issues_row_found_wrong(maps, runner, pynative):
    """mint.any, which the table calls consistent and its probe found to agree on one call: the row's own call
    (the torch call with mint.any in its place) is wrong on a float tensor with a zero in it."""
    row = next(r for r in domain.row_pairs(maps) if r.torch["api"] == "torch.any")
    assert row.mindspore["api"] == "mindspore.mint.any" and row.rule == "api_function"
    found = runner.probe_entry(row)
    assert found.mindspore == "mindspore.mint.any" and found.parts["float32"] == "agrees"
    assert found.parts["zeros and -0"].startswith("differs: the output")


def test_the_loader_reads_what_differs_into_the_entry(maps):
    record = domain.recorded()
    for e in domain.probed_entries(maps):
        wrong = {p for p, o in record[e.id]["parts"].items() if o.startswith(("differs", "crashes"))}
        assert {p for p, _ in e.domain} == wrong, e.id


def test_a_call_of_an_entry_that_differs_on_part_of_its_domain_is_partial_and_says_where(maps):
    src = b"import torch\n\ndef f(x):\n    return x.max(), x.cumsum(0), x.abs()\n"
    result = translate_bytes(src, "f.py", to="mindspore", scope="model", mappings=maps)
    by_api = {s.api: s for s in result.sites}
    for api, part in (("torch.Tensor.max", "nan"), ("torch.Tensor.cumsum", "int32")):
        site = by_api[api]
        assert site.status == "partial", api
        note = next(d for d in site.diagnostics if d.code == "RC327")
        assert "domain" in note.message and "MindSpore" in note.message and part in note.message
    assert by_api["torch.Tensor.abs"].status == "converted"


ISSUE_CALLS = """\
import torch
import torch.nn.functional as F


def f(x, mask, p, t):
    return x.any(1), x.masked_fill(mask, float("-inf")).softmax(-1), F.binary_cross_entropy(p, t)
"""


def test_the_calls_that_computed_other_values_convert_to_what_computes_torchs(maps, tmp_path, pynative):
    """x.any(dim) of a float tensor, softmax over a fully masked row and BCE of saturated probabilities: MindSpore's
    own functions compute other values there (the pins above); the translation calls recompat.runtime's, which
    the domain probes found to agree everywhere, and notes nothing."""
    result = translate_bytes(ISSUE_CALLS.encode(), "f.py", to="mindspore", scope="model", mappings=maps)
    status = {s.api: s.status for s in result.sites}
    for api in ("torch.Tensor.any", "torch.Tensor.softmax", "torch.nn.functional.binary_cross_entropy"):
        assert status[api] == "converted", api
    assert not [d for s in result.sites for d in s.diagnostics if d.code == "RC327"]
    (tmp_path / "t.py").write_text(ISSUE_CALLS)
    (tmp_path / "m.py").write_text(result.new_data.decode())
    import importlib.util

    def load(name):
        spec = importlib.util.spec_from_file_location(name, tmp_path / f"{name}.py")
        module = importlib.util.module_from_spec(spec)
        spec.loader.exec_module(module)
        return module.f

    x = np.array([[0, 0.5, 0], [0, 0, 0], [1, 2, 3]], np.float32)
    mask = np.zeros((3, 3), bool)
    mask[1] = True                                                      # a fully masked row
    p, t = np.array([0, 1, 0.3, 1], np.float32), np.array([1, 0, 1, 1], np.float32)
    want = [o.numpy() for o in load("t")(*(torch.tensor(a) for a in (x, mask, p, t)))]
    got = [o.asnumpy() for o in load("m")(*(ms.Tensor(a) for a in (x, mask, p, t)))]
    assert want[0].tolist() == got[0].tolist() == [True, False, True]
    np.testing.assert_allclose(got[1], want[1], rtol=1e-5)              # NaN at the same places: the masked row
    assert np.isnan(got[1][1]).all() and np.isfinite(got[1][[0, 2]]).all()
    assert float(got[2]) == pytest.approx(float(want[2]), rel=1e-6) == pytest.approx(50.30, abs=0.01)


def test_check_fails_where_an_outcome_changed_and_names_it(maps, tmp_path):
    record = json.loads(domain.DOMAIN_RECORD.read_text(encoding="utf-8"))
    record["entries"]["tensor_abs"]["parts"]["int64"] = "differs: planted"
    (tmp_path / "domain.json").write_text(json.dumps(record), encoding="utf-8")
    said = []
    e = entry(maps, "tensor_abs")
    assert domain.prove([e], maps, tmp_path, check=True, say=said.append) == 1
    assert any("tensor_abs: int64: differs -> agrees" in line for line in said)
    assert domain.prove([e], maps, domain.DOMAIN_RECORD.parent, check=True, say=said.append) == 0


def test_recording_keeps_the_other_entries_records(maps, tmp_path):
    (tmp_path / "domain.json").write_bytes(domain.DOMAIN_RECORD.read_bytes())
    e = entry(maps, "tensor_abs")
    assert domain.prove([e], maps, tmp_path, say=lambda _: None) == 0
    assert domain.recorded(tmp_path / "domain.json") == domain.recorded()


# -- MindSpore 2.10 behaviours the probes found (docs/behaviours.md) ------------------------------------------------

def test_pin_mindspore_any_with_a_dim_is_wrong_on_non_bool_input(pynative):
    x = np.array([[0, 0.5, 0], [0, 0, 0]], np.float32)
    assert torch.tensor(x).any(1).tolist() == [True, False]
    assert ms.Tensor(x).any(1).asnumpy().tolist() != [True, False]
    assert ms.Tensor(x > 0).any(1).asnumpy().tolist() == [True, False]


def test_pin_mindspore_binary_cross_entropy_clamps_the_log_elsewhere(pynative):
    p, t = np.array([0, 1, 0.3, 1], np.float32), np.array([1, 0, 1, 1], np.float32)
    torch_loss = float(torch.nn.functional.binary_cross_entropy(torch.tensor(p), torch.tensor(t)))
    ms_loss = float(ms.mint.nn.functional.binary_cross_entropy(ms.Tensor(p), ms.Tensor(t)).asnumpy())
    assert torch_loss == pytest.approx(50.30, abs=0.01)     # log clamped at -100
    assert ms_loss == pytest.approx(14.12, abs=0.01)        # log clamped at log(1e-12)


def test_pin_mindspore_softmax_of_an_all_minus_inf_row_is_zeros(pynative):
    x = np.random.default_rng(0).random((4, 3)).astype(np.float32)
    mask = np.zeros((4, 3), bool)
    mask[1] = True
    t = torch.tensor(x).masked_fill(torch.tensor(mask), float("-inf")).softmax(-1).numpy()
    m = ms.Tensor(x).masked_fill(ms.Tensor(mask), float("-inf")).softmax(-1).asnumpy()
    assert np.isnan(t[1]).all() and np.isfinite(t[[0, 2, 3]]).all()
    assert (m[1] == 0).all()
    assert np.allclose(m[0], t[0])


def test_pin_mindspore_max_and_clamp_drop_nan(pynative):
    x = np.array([0.2, np.nan, 0.7], np.float32)
    assert np.isnan(torch.tensor(x).max().item())
    assert float(ms.Tensor(x).max().asnumpy()) == pytest.approx(0.7)
    assert np.isnan(torch.tensor(x).clamp(0.3, 0.6).numpy()[1])
    assert not np.isnan(ms.Tensor(x).clamp(0.3, 0.6).asnumpy()[1])


def test_pin_mindspore_max_pool_of_a_window_all_minus_inf_is_minus_float_max(pynative):
    x = np.full((1, 1, 2, 2), -np.inf, np.float32)
    assert torch.nn.MaxPool2d(2)(torch.tensor(x)).item() == -np.inf
    assert ms.nn.MaxPool2d(2)(ms.Tensor(x)).asnumpy().item() == -np.finfo(np.float32).max


def test_pin_mindspore_divides_by_minus_zero_to_plus_inf_and_cumprod_has_no_gradient_at_zero(pynative):
    x, z = np.array([1.0, 2.0], np.float32), np.array([-0.0, 0.0], np.float32)
    assert torch.divide(torch.tensor(x), torch.tensor(z)).tolist() == [-np.inf, np.inf]
    assert ms.mint.divide(ms.Tensor(x), ms.Tensor(z)).asnumpy().tolist() == [np.inf, np.inf]
    v = np.array([[0.0, 2.0, 3.0]], np.float32)
    t = torch.tensor(v, requires_grad=True)
    torch.cumprod(t, 1).sum().backward()
    m = ms.grad(lambda a: ms.mint.cumprod(a, 1).sum())(ms.Tensor(v)).asnumpy()
    assert np.isfinite(t.grad.numpy()).all() and np.isnan(m[0, 0])


def test_pin_mindspore_hardshrink_and_nan_maximum_drop_nan(pynative):
    x, y = np.full(8, 0.7, np.float32), np.full(8, 0.5, np.float32)
    x[1] = np.nan
    assert np.isnan(torch.nn.functional.hardshrink(torch.tensor(x)).numpy()[1])
    assert ms.mint.nn.functional.hardshrink(ms.Tensor(x)).asnumpy()[1] == 0            # four elements or more
    assert np.isnan(ms.mint.nn.functional.hardshrink(ms.Tensor(x[:3])).asnumpy()[1])   # three: NaN kept
    assert np.isnan(torch.maximum(torch.tensor(x), torch.tensor(y)).numpy()[1])
    assert ms.mint.maximum(ms.Tensor(x), ms.Tensor(y)).asnumpy()[1] == 0.5


_AFTER_AN_EMPTY_DIM = """
import mindspore as ms, numpy as np
ms.set_context(mode=ms.PYNATIVE_MODE)
def grads(shape):
    a, b = (ms.Tensor(np.ones(shape, np.float32)) for _ in range(2))
    return ms.grad(lambda x, y: (ms.ops.stack([x, y]) * 2).sum(), grad_position=(0, 1))(a, b)
print(grads((2, 3))[0].shape, grads((0, 3))[0].shape)
try:
    grads((1, 3))
    print("no error")
except RuntimeError as e:
    print("Unstack, memcpy error" in str(e))
print(grads((1, 3))[0].shape)
"""


def test_pin_mindspore_fails_the_backward_after_one_over_an_empty_dim():
    """Why the probes judge an empty dim last and then run the plain call once more (Runner.probe_entry). In a
    process of its own: the next backward either raises once (then works) or, seen under load, dies of SIGSEGV."""
    r = subprocess.run([sys.executable, "-c", _AFTER_AN_EMPTY_DIM], capture_output=True, text=True, timeout=300,
                       env={**os.environ, "GLOG_v": "3"})
    lines = r.stdout.split("\n")
    assert lines[0] == "(2, 3) (0, 3)", r.stderr[-2000:]
    if r.returncode == -signal.SIGSEGV:   # seen under load: the failing backward takes the process down
        assert lines[1:] == [""], r.stdout
    else:
        assert r.returncode == 0 and lines[1:3] == ["True", "(1, 3)"], ("fails once, then works", r.stdout, r.stderr)


def test_a_kernel_that_kills_the_process_is_that_parts_outcome_and_the_run_goes_on(maps):
    """MindSpore 2.10's CPU flip of a tensor with an empty dim dies of SIGFPE (a pin, too): probe_all runs the
    entries in a process of its own, records the part as "crashes" and goes on with the rest in a new one."""
    flip, other = entry(maps, "table:torch.flip"), entry(maps, "tensor_abs")
    said = []
    found = domain.probe_all([flip, other], maps, say=said.append)
    assert found[flip.id].parts["an empty dim"] == "crashes: the process died (SIGFPE) running it"
    assert found[flip.id].parts["float32"] == "agrees" and len(found[flip.id].parts) > 5, "the rest was run"
    assert found[other.id].parts and not found[other.id].differing(), "the next entry was probed too"
    assert any("table:torch.flip: an empty dim: the process died (SIGFPE)" in line for line in said)
    assert dict(flip.domain)["an empty dim"].startswith("crashes"), "the record makes it a part it is wrong on"


# -- what users read and what bad input gets ------------------------------------------------------------------------

@pytest.mark.parametrize("lang, differs, agrees", [("en", "not on these", "agrees with torch on every one"),
                                                   ("zh", "不一致", "都与 torch 一致")])
def test_an_entrys_page_shows_what_its_domain_probes_found(lang, differs, agrees):
    docs = domain.MAPPINGS.parent / "docs" / lang
    max_page = (docs / "tensor_max.md").read_text(encoding="utf-8")
    assert "| nan | differs: the output" in max_page and "RC327" in max_page and differs in max_page
    assert agrees in (docs / "tensor_abs.md").read_text(encoding="utf-8")


def test_a_domain_record_that_cannot_be_read_is_named(tmp_path):
    folder = tmp_path / "mappings"
    import shutil

    shutil.copytree(mappings.HERE, folder, ignore=shutil.ignore_patterns("examples", "__pycache__"))
    (folder / "domain.json").write_text("{not json", encoding="utf-8")
    with pytest.raises(mappings.MappingError, match=r"domain\.json: cannot read the recorded domain probes.*"
                                                    r"`recompat prove`"):
        mappings.load(folder)


def test_a_call_giving_a_parameter_twice_is_left_by_hand_not_a_crash(maps):
    src = b"import torch\n\ndef f():\n    return torch.full(1.5, size=(2, 3))\n"
    result = translate_bytes(src, "f.py", to="mindspore", scope="model", mappings=maps)
    site = next(s for s in result.sites if s.api == "torch.full")
    assert site.status == "manual"
    assert any(d.code == "RC303" and "size is given twice" in d.message for d in site.diagnostics)


@pytest.mark.parametrize("entry_id, runtime_import, own", [
    ("f_binary_cross_entropy", "from recompat.runtime import binary_cross_entropy",
     "from mindspore.mint.nn.functional import binary_cross_entropy"),
    ("tensor_any", "from recompat.runtime import tensor_any", "def tensor_any(x, *a, **k):\n    return x.any(*a, **k)")])
def test_the_harness_fails_the_example_with_mindsporess_own_function(tmp_path, entry_id, runtime_import, own):
    """The paired examples hold what the domain probes found (saturated probabilities, a float tensor with zeros):
    compare() passes the translation and fails it with MindSpore's own function put back."""
    import importlib.util

    from recompat.compat import compare

    folder = mappings.HERE / "examples" / entry_id
    text = (folder / "mindspore_example.py").read_text(encoding="utf-8")
    assert runtime_import in text
    (tmp_path / "runtime.py").write_text(text, encoding="utf-8")
    (tmp_path / "own.py").write_text(text.replace(runtime_import, own), encoding="utf-8")

    def load(path, name):
        spec = importlib.util.spec_from_file_location(f"{entry_id}_{name}", path)
        module = importlib.util.module_from_spec(spec)
        spec.loader.exec_module(module)
        return module

    t = load(folder / "torch_example.py", "torch")
    for name, passes in (("runtime", True), ("own", False)):
        torch.manual_seed(0)
        assert compare(t.Example(), load(tmp_path / f"{name}.py", name).Example(), t.INPUTS).passed is passes, name


def test_a_worker_that_cannot_start_is_one_clear_error_not_a_restart_per_entry(maps, monkeypatch, tmp_path):
    broken = tmp_path / "python"
    broken.write_text("#!/bin/sh\necho 'no module named recompat' >&2\nexit 3\n")
    broken.chmod(0o755)
    monkeypatch.setattr(domain.sys, "executable", str(broken))
    with pytest.raises(RuntimeError, match=r"died \(exit status 3\) before it began: no module named recompat"):
        domain.probe_all([entry(maps, "tensor_abs"), entry(maps, "tensor_max")], maps, say=lambda _: None)
