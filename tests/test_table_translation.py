"""translate --scope model draws on the official mapping table's rows that recompat verify-table found to agree
(recompat.mappings.table_entries): a torch API no entry of mappings/ translates is carried over to the row's
MindSpore API when its row agrees, with only the parameters the agreeing calls gave (RC323); a call that gives
another one stays as it is (RC324). The record (mappings/table/verdicts.json) is the one source: change a verdict
there and the translation changes with it."""
from __future__ import annotations

import importlib.util
import json
import shutil
import sys
import textwrap

import numpy as np
import pytest

from recompat import mappings
from recompat.translator.translate import translate_bytes

SOURCE = textwrap.dedent("""\
    import torch


    def f(x, mask):
        a, b = torch.chunk(x, 2, dim=-1)
        c = torch.cumprod(a, 1)
        d = torch.logical_or(mask, mask)
        parts = torch.split(x, 2, dim=1)
        return c, b, d, x.long(), parts[1], torch.eye(3)
    """)


def translated(text: str, maps=None):
    r = translate_bytes(text.encode(), "m.py", to="mindspore", scope="model", mappings=maps)
    codes: dict[str, list[str]] = {}
    for site in r.sites:
        codes.setdefault(site.api, []).extend(d.code for d in site.diagnostics)
    return (r.new_data or text.encode()).decode(), codes


def load(path, name):
    spec = importlib.util.spec_from_file_location(name, path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_agreeing_rows_carry_calls_over_and_the_translation_computes_what_torch_does(tmp_path):
    out, codes = translated(SOURCE)
    assert "a, b = mindspore.mint.chunk(x, 2, dim=-1)" in out
    assert "c = mindspore.mint.cumprod(a, 1)" in out
    assert "parts = mindspore.mint.split(x, 2, dim=1)" in out
    assert "x.long()" in out and "import torch" not in out
    table = {e.torch["api"]: e for e in mappings.default().table}
    for api in ("torch.chunk", "torch.cumprod", "torch.logical_or", "torch.split", "torch.Tensor.long", "torch.eye"):
        # RC327 where the domain probes found a part the row's MindSpore API is wrong on (mappings/domain.json)
        assert codes[api] == ["RC323"] + ["RC327"] * bool(table[api].domain), api
    assert "zeros and -0" in dict(table["torch.cumprod"].domain), "MindSpore's gradient of cumprod at a zero is NaN"
    (tmp_path / "t.py").write_text(SOURCE)
    (tmp_path / "m.py").write_text(out)
    import mindspore as ms
    import torch

    rng = np.random.default_rng(0)
    x, mask = rng.uniform(0.5, 1.5, (4, 6)).astype(np.float32), rng.random((4, 6)) < 0.5
    want = load(tmp_path / "t.py", "table_t").f(torch.tensor(x), torch.tensor(mask))
    got = load(tmp_path / "m.py", "table_m").f(ms.Tensor(x), ms.Tensor(mask))
    assert len(want) == len(got)
    for w, g in zip(want, got):
        assert g.asnumpy().dtype == w.numpy().dtype
        np.testing.assert_allclose(g.asnumpy(), w.numpy(), rtol=1e-6, atol=1e-6)


def test_a_parameter_the_probe_did_not_try_leaves_the_call_by_hand():
    out, codes = translated("import torch\n\ny = torch.cumprod(x, 1, dtype=torch.float64)\n"
                            "z = torch.cumprod(x, 1, dtype=None)\n")
    assert "y = torch.cumprod(x, 1, dtype=" in out, "left as it is"
    assert "z = mindspore.mint.cumprod(x, 1)" in out, "its torch default given: the call the probe made"
    assert codes["torch.cumprod"] == ["RC324", "RC323", "RC327"], "the converted call notes its domain"


def test_a_row_with_a_difference_in_another_dtype_is_not_drawn_on():
    """grid_sample agrees in float32 but MindSpore's CPU computes it in half precision for float16 inputs; max
    raises on bool inputs. A translation cannot tell the dtype from the text: these stay outside the set."""
    recorded = {r["torch_api"]: r for r in json.loads(
        (mappings.HERE / mappings.TABLE_VERDICTS).read_text(encoding="utf-8"))["rows"]}
    assert recorded["torch.nn.functional.grid_sample"]["dtypes"]["float16"].startswith("differs")
    out, codes = translated("import torch.nn.functional as F\n\ny = F.grid_sample(x, grid)\n")
    assert codes["torch.nn.functional.grid_sample"] == ["RC301"] and "F.grid_sample(x, grid)" in out


def test_an_entry_of_mappings_wins_over_the_tables_row():
    """torch.exp has its own entry (proven by its paired example): that entry translates it, not the row."""
    assert any(r["torch_api"] == "torch.exp" and r["verdict"] == "agrees" for r in json.loads(
        (mappings.HERE / mappings.TABLE_VERDICTS).read_text(encoding="utf-8"))["rows"])
    out, codes = translated("import torch\n\ny = torch.exp(x)\n")
    assert codes["torch.exp"][0] == "RC300" and "RC323" not in codes["torch.exp"] and "y = ops.exp(x)" in out and "mint" not in out


@pytest.mark.parametrize("change", ["differs", "tried less"])
def test_the_recorded_verdict_is_what_the_translation_stands_on(tmp_path, change):
    """Planted: a copy of the mappings whose record says cumprod differs, or that its probe gave no `dim`."""
    folder = tmp_path / "mappings"
    shutil.copytree(mappings.HERE, folder, ignore=shutil.ignore_patterns("__pycache__", "examples", "*.py"))
    record = json.loads((folder / mappings.TABLE_VERDICTS).read_text(encoding="utf-8"))
    row = next(r for r in record["rows"] if r["torch_api"] == "torch.cumprod")
    if change == "differs":
        row["verdict"] = "differs"
    else:
        row["call"]["tried"] = ["input"]
    (folder / mappings.TABLE_VERDICTS).write_text(json.dumps(record), encoding="utf-8")
    maps = mappings.load(folder)
    out, codes = translated("import torch\n\ny = torch.cumprod(x, 1)\n", maps)
    assert "y = torch.cumprod(x, 1)" in out
    assert codes["torch.cumprod"] == (["RC301"] if change == "differs" else ["RC324"])


@pytest.mark.parametrize("text, message", [
    ("{not json", r"verdicts\.json: cannot read the recorded verdicts \(Expecting"),
    (json.dumps({"rows": [{"section": "torch", "torch_api": "torch.cumprod", "verdict": "agrees",
                           "call": {"torch": "cumprod(input, dim)"}}]}),
     r"verdicts\.json: the row of torch\.cumprod cannot be read \(KeyError: 'mindspore'\)"),
])
def test_an_unreadable_record_is_named(tmp_path, text, message):
    folder = tmp_path / "mappings"
    shutil.copytree(mappings.HERE, folder, ignore=shutil.ignore_patterns("__pycache__", "examples", "*.py"))
    (folder / mappings.TABLE_VERDICTS).write_text(text, encoding="utf-8")
    with pytest.raises(mappings.MappingError, match=message + r".*`recompat verify-table --record`"):
        mappings.load(folder)


if __name__ == "__main__":   # pragma: no cover
    sys.exit(pytest.main([__file__]))
