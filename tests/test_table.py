"""recompat verify-table: MindSpore's official PyTorch mapping table, each row probed on both frameworks.

The recorded verdicts (mappings/table/verdicts.json, `verify-table --record`) are what the published table will
say: every row is probed again here and must give the same verdict, each difference by the same call (a new torch
or MindSpore that changes one fails here, as `verify-table --check` does). The probe's checks are shown to fail on
planted rows that pair the wrong functions."""
from __future__ import annotations

import json
import os
import re
from pathlib import Path

os.environ.setdefault("GLOG_v", "3")

import pytest

from recompat.cli import main
from recompat.compat import table

RECORDED = table.recorded()


@pytest.fixture(scope="module")
def probe():
    return table.Probe(table.read_probes())


def row(torch_api: str, mindspore_api: str = "", section: str | None = None) -> table.Row:
    section = section or torch_api.rsplit(".", 1)[0]
    return table.Row(section, torch_api, mindspore_api, "Consistent")


def rows_of(apis):
    by_api = {r.torch_api: r for r in table.read_rows()}
    return [by_api[a] for a in apis]


# -- reading torch's signatures (no framework run) ---------------------------------------------------

@pytest.mark.parametrize("doc, expected", [
    ("abs(input: Tensor, *, out: Optional[Tensor]) -> Tensor", [("input", None, False, False), ("out", None, True, False)]),
    ("zeros(*size, *, out=None, dtype=None) -> Tensor",
     [("size", None, False, True), ("out", "None", True, False), ("dtype", "None", True, False)]),
    ("arange(start=0, end, step=1, *, out=None) -> Tensor",    # not Python: a default before a required one
     [("start", "0", False, False), ("end", None, False, False), ("step", "1", False, False),
      ("out", "None", True, False)]),
    ("linalg.inv(A, *, out=None) -> Tensor", [("A", None, False, False), ("out", "None", True, False)]),
    ("full_like(input, fill_value, \\*, dtype=None) -> Tensor",
     [("input", None, False, False), ("fill_value", None, False, False), ("dtype", "None", True, False)]),
    ("norm(input, dim=(0, 1), keepdim=False) -> Tensor",
     [("input", None, False, False), ("dim", "(0, 1)", False, False), ("keepdim", "False", False, False)]),
])
def test_a_signature_is_read_from_torchs_docstring_form(doc, expected):
    params = table.torch_signature(_NoSignature(doc), False)
    assert [(p.name, p.default, p.keyword_only, p.varargs) for p in params] == expected


class _NoSignature:
    """A callable inspect cannot read, as torch's built-ins are."""

    def __init__(self, doc):
        self.__doc__ = doc

    @property
    def __signature__(self):
        raise ValueError("no signature")


def test_a_docstring_that_is_no_signature_gives_none():
    assert table.torch_signature(_NoSignature("Eliminates all but the first element of each group."), False) is None


# -- verdicts ----------------------------------------------------------------------------------------

@pytest.fixture(scope="module")
def whole_table():
    return table.verify(table.read_rows(), table.read_probes())


@pytest.mark.runtime
def test_every_recorded_verdict_holds(whole_table):
    """The whole table, in its order, as `verify-table --check` runs it (a few seconds): each verdict is the recorded
    one, and each difference is shown again by the same call. In the table's order a row runs after others that
    failed: MindSpore 2.10 has failed an op that has a kernel with the error of the op before it (concat after
    clone), so a probe clears that state after each failure; without it rows that agree come out "no kernel"."""
    assert len(RECORDED) == len(whole_table), "run `recompat verify-table --record`"
    changed = [(v.torch_api, RECORDED[v.torch_api]["verdict"], v.verdict, v.reason) for v in whole_table
               if RECORDED.get(v.torch_api, {}).get("verdict") != v.verdict]
    assert not changed
    for v in whole_table:
        if v.verdict == "differs":
            assert v.reason == RECORDED[v.torch_api]["reason"]
        # each other dtype's outcome too; a difference shown again in the same words
        recorded = RECORDED[v.torch_api].get("dtypes") or {}
        assert {d: o.split(":")[0] for d, o in v.dtypes.items()} == {d: o.split(":")[0] for d, o in recorded.items()}
        assert all(o == recorded[d] for d, o in v.dtypes.items() if o.startswith("differs")), v.torch_api
        # what the translator takes from an agreeing row (mappings.table_entries): the signatures, what was tried
        assert v.call == (RECORDED[v.torch_api].get("call") or {}), v.torch_api


def test_the_record_holds_every_verdict_kind_the_table_needs():
    """What the published table will stand on: most rows in scope have a verdict, and the kinds are there."""
    kinds = {r["verdict"] for r in RECORDED.values()}
    assert {"agrees", "differs", "no kernel", "not probed", "out of scope"} <= kinds
    in_scope = [r for r in RECORDED.values() if r["verdict"] != "out of scope"]
    assert sum(r["verdict"] != "not probed" for r in in_scope) / len(in_scope) >= 0.95   # the goal


@pytest.mark.runtime
def test_an_agreeing_row_says_what_was_tried(probe):
    v = probe.row(row("torch.add", "mindspore.mint.add", "torch"))
    assert v.verdict == "agrees" and "gradients" in v.reason
    assert v.tried == ["torch.add(input, other)", "torch.add(input, other, alpha=2)"]


@pytest.mark.runtime
@pytest.mark.parametrize("planted, expected, reason", [
    (row("torch.sin", "mindspore.mint.cos", "torch"), "differs", "output 0: values differ"),
    (row("torch.exp", "mindspore.mint.exp2", "torch"), "no kernel", "Exp2"),     # exp2 has no CPU kernel
    (row("torch.sum", "mindspore.mint.mean", "torch"), "differs", "output 0: values differ"),
    (row("torch.topk", "mindspore.ops.topk", "torch"), "differs", "output 1: dtype int64 on torch, int32 on MindSpore"),
    (row("torch.rand", "mindspore.ops.randn", "torch"), "differs", "output 0: another distribution"),
    (row("torch.rand", "mindspore.ops.rand", "torch"), "agrees", "drawn from the same distribution"),
    (row("torch.nn.BatchNorm1d", "mindspore.nn.BatchNorm1d", "torch.nn"), "not probed", "cannot be paired by name"),
    (row("torch.nn.Linear", "mindspore.mint.nn.ReLU", "torch.nn"), "differs", "MindSpore's constructor raises"),
    (row("torch.exp", "mindspore.mint.no_such_function", "torch"), "missing", "MindSpore"),
    (row("torch.no_such_function", "mindspore.mint.exp", "torch"), "missing", "torch"),
    (row("torch.nn.functional.cosine_similarity", "mindspore.ops.cosine_similarity", "torch.nn.functional"),
     "not probed", "no input for parameter 'x1'"),
])
def test_planted_rows_get_the_verdict_they_deserve(probe, planted, expected, reason):
    """Rows that pair the wrong functions, or name what does not exist: the probe's checks fail them."""
    v = probe.row(planted)
    assert v.verdict == expected and reason in v.reason, (v.verdict, v.reason)


@pytest.mark.runtime
def test_a_layer_is_built_alike_given_torchs_weights_and_compared_with_its_gradients(probe):
    v = probe.row(row("torch.nn.Linear", "mindspore.mint.nn.Linear", "torch.nn"))
    assert v.verdict == "agrees" and "gradients" in v.reason
    assert v.tried == ["torch.nn.Linear(in_features, out_features) on inputs of shape 2x3",
                       "torch.nn.Linear(in_features, out_features, bias=False) on inputs of shape 2x3"]


@pytest.mark.runtime
def test_a_layers_parameter_gradient_that_differs_is_found(probe, monkeypatch):
    """The same outputs, a parameter's gradient doubled: the probe compares the parameters' gradients too."""
    import mindspore as ms
    from mindspore import mint

    class Planted(mint.nn.Linear):
        def construct(self, x):
            w = self.weight * 2 - ms.ops.stop_gradient(self.weight)   # the weight going forward, gradient 2
            return mint.nn.functional.linear(x, w, self.bias)

    resolve = table.resolve
    monkeypatch.setattr(table, "resolve", lambda qual: Planted if qual == "planted.Linear" else resolve(qual))
    v = probe.row(row("torch.nn.Linear", "planted.Linear", "torch.nn"))
    assert v.verdict == "differs" and "gradients: gradient of 1: values differ" in v.reason, v.reason
    assert "(in order: input, weight, bias)" in v.reason


@pytest.mark.runtime
def test_a_gradient_that_differs_is_found(probe, monkeypatch):
    """Outputs the same, gradients not: relu on positive inputs against x * 2 - stop_gradient(x), which is x going
    forward and has gradient 2."""
    import mindspore as ms

    def planted(x):
        return x * 2 - ms.ops.stop_gradient(x)

    resolve = table.resolve
    monkeypatch.setattr(table, "resolve", lambda qual: planted if qual == "planted.relu" else resolve(qual))
    v = probe.row(row("torch.nn.functional.relu", "planted.relu", "torch.nn.functional"))
    assert v.verdict == "differs" and v.reason.startswith("defaults: gradients: output 0: values differ"), v.reason




def test_out_of_scope_sections_get_their_reason_without_running_anything():
    v = table.Probe({}).row(row("torchvision.datasets.MNIST", "mindspore.dataset.MnistDataset", "torchvision"))
    assert v.verdict == "out of scope" and "torchvision" in v.reason


# -- the command -------------------------------------------------------------------------------------

@pytest.mark.runtime
def test_cli_runs_rows_and_writes_json(tmp_path, capsys):
    out = tmp_path / "t.json"
    assert main(["verify-table", "--api", "torch.abs", "--api", "torch.acos", "--json", str(out)]) == 0
    data = json.loads(out.read_text())
    assert {r["torch_api"]: r["verdict"] for r in data["rows"]} == {"torch.abs": "agrees", "torch.acos": "no kernel"}
    err = capsys.readouterr().err
    assert "2 rows: 1 agrees, 1 no kernel; a verdict for 2 of 2 rows in scope (100.0%)" in err


@pytest.mark.runtime
def test_cli_check_fails_where_a_verdict_changed(tmp_path, monkeypatch, capsys):
    changed = dict(RECORDED)
    changed["torch.abs"] = {**changed["torch.abs"], "verdict": "no kernel"}
    monkeypatch.setattr(table, "recorded", lambda path=None: changed)
    assert main(["verify-table", "--check", "-q", "--api", "torch.abs", "--api", "torch.acos"]) == 1
    assert "torch.abs: no kernel -> agrees (" in capsys.readouterr().err


def test_cli_check_fails_where_another_dtype_changed(monkeypatch, capsys):
    """A row whose float32 verdict holds but whose float16 outcome changed is a change too."""
    changed = dict(RECORDED)
    assert changed["torch.abs"]["dtypes"]["float16"] == "agrees"
    changed["torch.abs"] = {**changed["torch.abs"], "dtypes": {**changed["torch.abs"]["dtypes"],
                                                              "float16": "no kernel: planted"}}
    monkeypatch.setattr(table, "recorded", lambda path=None: changed)
    assert main(["verify-table", "--check", "-q", "--api", "torch.abs"]) == 1
    assert "torch.abs: agrees -> agrees; other dtypes: float16 no kernel, int64 agrees -> float16 agrees, int64 " \
           "agrees" in capsys.readouterr().err


def test_cli_check_fails_where_the_calls_the_translator_takes_changed(monkeypatch, capsys):
    """An agreeing row whose signatures or tried parameters changed (a new version's signature) is a change: the
    translator carries calls over by them (recompat.mappings.table_entries)."""
    changed = dict(RECORDED)
    call = changed["torch.cumprod"]["call"]
    assert call["tried"] == ["input", "dim"]
    changed["torch.cumprod"] = {**changed["torch.cumprod"], "call": {**call, "tried": ["input", "dim", "dtype"]}}
    monkeypatch.setattr(table, "recorded", lambda path=None: changed)
    assert main(["verify-table", "--check", "-q", "--api", "torch.cumprod"]) == 1
    assert ("torch.cumprod: agrees -> agrees; the calls the translator takes from it: cumprod(input, dim, *, "
            "dtype=None, out=None) as cumprod(input, dim, dtype=None), given input, dim, dtype -> ") \
        in capsys.readouterr().err


def test_other_dtypes_are_tried_where_float32_agrees():
    """torch.sin agrees in float32; MindSpore 2.10 has no CPU Sin kernel for int64 nor bool inputs (torch promotes
    them to float32), and mint.sinc gives NaN at 0 for a bool input where torch gives 1: each is recorded."""
    sin, sinc = RECORDED["torch.sin"], RECORDED["torch.sinc"]
    assert sin["verdict"] == "agrees" and sin["dtypes"]["float16"] == "agrees"
    assert sin["dtypes"]["int64"].startswith("no kernel: Select CPU operator[Sin] fail! Unsupported data type")
    assert sinc["dtypes"]["bool"].startswith("differs: output 0: 3 value(s) NaN or infinite on one side only")


@pytest.mark.parametrize("argv, message", [
    (["--api", "torch.no_such"], "not a row of the table: torch.no_such"),
    (["--table", "missing.csv"], "missing.csv: cannot read the table"),
    (["--record", "--api", "torch.abs"], "--record records every row"),
])
def test_cli_bad_input_is_named(argv, message, capsys):
    assert main(["verify-table", *argv]) == 2
    assert message in capsys.readouterr().err


def test_a_table_without_its_columns_is_refused(tmp_path, capsys):
    bad = tmp_path / "t.csv"
    bad.write_text("api,status\ntorch.abs,Consistent\n")
    assert main(["verify-table", "--table", str(bad)]) == 2
    assert "no column mindspore_api, official_status, section, torch_api" in capsys.readouterr().err


# -- the published page (docs/<lang>/table.md, generated by `recompat docs`; tests/test_docs.py checks it is current)

DOCS = Path(__file__).resolve().parents[1] / "docs"


@pytest.mark.parametrize("lang, consistent_but", [("en", "Where the table says consistent and it does not hold here"),
                                                  ("zh", "映射表称一致、实测不成立的行")])
def test_the_page_lists_every_consistency_claim_that_does_not_hold(lang, consistent_but):
    page = (DOCS / lang / "table.md").read_text(encoding="utf-8")
    claims = page.split(f"## {consistent_but}", 1)[1].split("\n## ", 1)[0]
    listed = re.findall(r"^\| `(torch[\w.]*)` \|", claims, re.M)
    expected = [api for api, r in RECORDED.items() if r["official"].lower().startswith("consistent")
                and r["verdict"] in ("differs", "no kernel", "missing")]
    assert listed == expected and len(expected) > 50
    every_row = re.findall(r"^\| `(torch[\w.]*)` \|", page.split("\n## ", 5)[5], re.M)
    assert every_row == list(RECORDED)   # after the rows the translator draws on, every row, in the table's order


@pytest.mark.parametrize("lang, title", [("en", "What `recompat translate` carries over from it"),
                                         ("zh", "`recompat translate` 据此转换的行")])
def test_the_page_lists_the_rows_the_translator_draws_on(lang, title):
    from recompat import mappings

    page = (DOCS / lang / "table.md").read_text(encoding="utf-8")
    listed = re.findall(r"^\| `(torch[\w.]*)` \|", page.split(f"## {title}", 1)[1].split("\n## ", 1)[0], re.M)
    assert listed == [e.torch["api"] for e in mappings.default().table] and len(listed) > 50


@pytest.mark.parametrize("lang, title", [("en", "Where float32 agrees and another dtype does not"),
                                         ("zh", "float32 一致、其他数据类型不一致的行")])
def test_the_page_lists_every_row_another_dtype_breaks(lang, title):
    page = (DOCS / lang / "table.md").read_text(encoding="utf-8")
    listed = re.findall(r"^\| `(torch[\w.]*)` \|", page.split(f"## {title}", 1)[1].split("\n## ", 1)[0], re.M)
    expected = [api for api, r in RECORDED.items() if r["verdict"] == "agrees"
                and any(o != "agrees" for o in (r.get("dtypes") or {}).values())]
    assert listed == expected and len(expected) > 30


@pytest.mark.parametrize("lang, title, verdict", [("en", "Where one call agrees and its domain does not", "agrees in part"),
                                                  ("zh", "单次调用一致、定义域上不一致的行", "部分一致")])
def test_a_row_that_agrees_on_its_calls_and_not_over_its_domain_agrees_in_part(lang, title, verdict):
    """The domain probes' record (mappings/domain.json) of the entry that translates a row's pair of APIs, whether
    made from the row (RC323) or from mappings/, or of the row's own call where no entry takes it: a part it is
    wrong on makes the row's verdict "agrees in part"."""
    from recompat import mappings
    from recompat.compat import domain

    maps, record = mappings.default(), domain.recorded()
    wrong = {(e.torch["api"], e.mindspore["api"]) for e in (*maps.entries, *maps.table)
             if any(o.startswith(mappings.DOMAIN_WRONG) for o in record.get(e.id, {}).get("parts", {}).values())}
    wrong |= {(r["api"], r["mindspore"]) for r in record.values()    # a row's own pair (domain.RowPair)
              if r.get("mindspore") and any(o.startswith(mappings.DOMAIN_WRONG) for o in r["parts"].values())}
    expected = [api for api, r in RECORDED.items() if r["verdict"] == "agrees" and (api, r["mindspore_api"]) in wrong]
    page = (DOCS / lang / "table.md").read_text(encoding="utf-8")
    listed = re.findall(r"^\| `(torch[\w.]*)` \|", page.split(f"## {title}", 1)[1].split("\n## ", 1)[0], re.M)
    assert listed == expected and "torch.cumprod" in listed
    assert any(line.startswith("| `torch.cumprod` |") and f"| {verdict} |" in line for line in page.splitlines())
    assert "zeros and -0, exact 0 and 1" in page.split(f"## {title}", 1)[1].split("\n## ", 1)[0]


@pytest.mark.parametrize("lang, agrees, on_calls, in_part", [
    ("en", "agrees", "agrees on the calls tried", "agrees in part"), ("zh", "一致", "所试调用一致", "部分一致")])
def test_a_row_agrees_only_where_its_pair_agrees_over_its_domain(lang, agrees, on_calls, in_part):
    """The page says "agrees" only of a row whose pair the domain probes tried (an entry's translated call, or the
    row's own call: mappings/domain.json's `row:` records) and found right on every part; a row whose pair could
    not be probed claims only its calls. The issue's rows (mint.any, mint's BCELoss and Softmax) agreed on one or
    two calls: over their domain they agree in part."""
    from recompat import mappings
    from recompat.compat import domain

    maps, record = mappings.default(), domain.recorded()
    probed = {(e.torch["api"], e.mindspore["api"]) for e in (*maps.entries, *maps.table)
              if record.get(e.id, {}).get("parts")}
    probed |= {(r["api"], r["mindspore"]) for r in record.values() if r.get("mindspore") and r.get("parts")}
    page = (DOCS / lang / "table.md").read_text(encoding="utf-8")
    sections = page.split("\n## torch\n", 1)[1]          # the rows by section, after the lists above them
    cells = [re.split(r"(?<!\\)\|", line) for line in sections.splitlines() if line.startswith("| `")]
    shown = {c[1].strip(" `"): c[4].strip() for c in cells}
    for api in ("torch.any", "torch.nn.BCELoss", "torch.nn.Softmax"):
        assert shown[api] == in_part, api
    pairs = {api: (api, RECORDED[api]["mindspore_api"]) for api in shown}
    assert sum(v == agrees for v in shown.values()) > 100
    assert all(pairs[api] in probed for api, v in shown.items() if v in (agrees, in_part))
    assert all(pairs[api] not in probed for api, v in shown.items() if v == on_calls)


def test_the_json_beside_the_page_is_the_record():
    assert json.loads((DOCS / "table.json").read_text(encoding="utf-8")) == json.loads(
        table.VERDICTS_FILE.read_text(encoding="utf-8"))


def test_no_mapping_entry_targets_an_api_the_table_run_found_without_a_kernel():
    """One source of truth: the translator's entries (each proven by its paired example) never target a MindSpore
    API that the table's probe found without a CPU kernel or missing; where the table's mint counterpart has none
    (torch.stack -> mint.stack), the entry targets one that runs (ops.stack). An entry that targets an API whose row
    differs carries the difference as a parameter decision (Tensor.round's decimals) or leaves a call that passes
    that parameter by hand, as one its recorded signature does not have (Tensor.gather's sparse_grad: RC303)."""
    from recompat import mappings

    failing = {r["mindspore_api"]: r for r in RECORDED.values() if r["verdict"] in ("no kernel", "missing")}
    differing = {r["mindspore_api"]: r for r in RECORDED.values() if r["verdict"] == "differs"}
    for e in mappings.default().entries:
        if e.rule not in mappings.CORE_RULES:
            continue
        for target in e.names("mindspore"):
            assert target not in failing, (e.id, target, failing[target]["reason"])
            if target in differing:
                param = differing[target]["reason"].split("=", 1)[0]
                args = mappings.signature_arguments(e.torch["signature"])
                recorded = {a.arg for a in (*args.posonlyargs, *args.args, *args.kwonlyargs)} if args else set()
                assert e.param(param, "torch") is not None or param not in recorded, \
                    (e.id, target, differing[target]["reason"])
