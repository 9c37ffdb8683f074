"""HTML reports as a user gets them: `recompat translate --report`, `recompat test --report`, `recompat report`.

The page is one self-contained file rendered from the JSON written beside it; user text (file names, messages,
code) is escaped; bad input (a missing, damaged or foreign JSON, an output that cannot be written) is exit 2 with
the file named and nothing half-written. Pure text except the one end-to-end `recompat test --report` run.
"""
from __future__ import annotations

import json
import os
import re
import stat
import subprocess
import sys
from pathlib import Path

import pytest

from conftest import TORCH_CHECKPOINT_MODEL
from recompat.cli import main
from recompat.reports import html

ROOT = Path(__file__).resolve().parent.parent
EVIL = "<img src=x onerror=alert(1)>.py"

MODEL = TORCH_CHECKPOINT_MODEL
PARTIAL = """\
import torch
from torch.utils.checkpoint import checkpoint


def run(fn, x, **options):
    return checkpoint(fn, x, **options)
"""


def make_tree(root: Path) -> Path:
    src = root / "src"
    src.mkdir(parents=True)
    (src / "model.py").write_text(MODEL)
    (src / "partial.py").write_text(PARTIAL)
    (src / EVIL).write_text(MODEL.replace("Net", "Evil"))
    (src / "plain.py").write_text("x = 1  # no checkpoint here\n")
    return src


def leftovers(folder: Path) -> list[Path]:
    return [p for p in folder.rglob("*") if p.name.endswith(".tmp")]


def suite_doc(**extra) -> dict:
    row = {"name": "output", "kind": "output", "expected_shape": [2, 2], "actual_shape": [2, 2],
           "expected_dtype": "float32", "actual_dtype": "float32", "max_abs_err": 0.5, "max_rel_err": 0.25,
           "cosine": 0.9, "within": 0.5, "rtol": 1e-4, "atol": 1e-5, "passed": False, "message": "too far"}
    report = {"passed": False, "expected": "torch", "actual": "mindspore", "summary": "FAILED", "counts": {},
              "meta": {"rtol": 1e-4, "atol": 1e-5}, "rows": [row]}
    base = {"device": "cpu", "ms_mode": "pynative", "figures": {}, "seconds": 0.1, "report": None}
    results = [
        dict(base, pair="mlp", check="cross", variant="plain", id="mlp-cross-plain-cpu-pynative", status="failed",
             message="torch vs mindspore: FAILED <b>bold</b>\nrow output: too far", report=report),
        dict(base, pair="mlp", check="cross", variant="recompute", id="mlp-cross-recompute-cpu-pynative",
             status="passed", message="torch vs mindspore: PASSED",
             report=dict(report, passed=True, rows=[dict(row, passed=True, max_abs_err=1e-8)])),
        dict(base, pair="mlp", check="memory", variant="torch:checkpoint", id="mlp-memory-torch:checkpoint-cpu--",
             status="passed", message="torch checkpoint: 5,024 -> 1,952 bytes",
             figures={"framework": "torch", "form": "checkpoint", "plain_bytes": 5024, "recompute_bytes": 1952,
                      "saved_bytes": 3072, "ratio": 2.57, "time_overhead": 1.16}),
        dict(base, pair="sac", check="selective", variant="policy", id="sac-selective-policy-cpu-pynative",
             status="passed", message="torch: 63,232 plain, 4,864 whole blocks, 21,248 policy",
             figures={"measure": "bytes", "torch": {"plain_bytes": 63232, "full_bytes": 4864, "policy_bytes": 21248,
                                                    "saved": {"aten.mm.default": 6, "aten.relu.default": 0}},
                      "mindspore": {"plain_bytes": 67008, "full_bytes": 4800, "policy_bytes": 21184,
                                    "saved": {"aten.mm.default": 6}}}),
        dict(base, pair="res", check="graph-recompute", variant="cell", id="res-graph-recompute-cell-cpu-graph",
             ms_mode="graph", status="failed", message="recompute mark not taken: nothing recomputed under layer1.2",
             figures={"form": "cell", "checkpointed": ["layer1.1", "layer1.2"], "missing": ["layer1.2"], "ops": 4,
                      "recomputed": {"layer1.1.conv1": ["Conv2D (cell)", "Conv2D (cell)"],
                                     "layer1.1": ["ReLU (cell)"], "": ["Mul (cell)"]}}),
        dict(base, pair="conv", check="mindspore-recompute", variant="cell", id="conv-mindspore-recompute-cell-gpu",
             device="gpu", status="skipped", message="no GPU here"),
        {"id": "planted-bug-gelu", "pair": "mlp", "check": "planted-bug", "variant": "gelu", "status": "caught",
         "control_passed": True, "message": "caught", "description": "GELU approximation"},
    ]
    doc = {"format": 1, "kind": "recompat-suite", "meta": {}, "totals": {}, "results": results}
    doc.update(extra)
    return doc


SWEEP = {"caption": "a chain", "points": [
    {"framework": fw, "depth": d, "segments": 2, "plain_bytes": 1000 * d, "recompute_bytes": 400 * d ** 0.5}
    for fw in ("torch", "mindspore") for d in (2, 4, 8)]}


# ------------------------------------------------------------------------------------------------ translate

def test_translate_report_writes_the_page_and_its_json_beside_it(tmp_path, capsys):
    src = make_tree(tmp_path)
    page = tmp_path / "out" / "sites.html"
    assert main(["translate", str(src), "--report", str(page)]) == 0
    err = capsys.readouterr().err
    assert f"report written to {page}" in err
    assert "--diff only shows" not in err, "the closing line is the one the user's own mode gets"
    doc = json.loads(page.with_suffix(".json").read_text())
    assert doc["kind"] == "recompat-translate" and doc["summary"]["sites"]["total"] == 3
    by_name = {Path(f["path"]).name: f for f in doc["files"]}
    assert set(by_name) == {"model.py", "partial.py", EVIL}
    assert "+        y = mindspore.recompute(self.block, x)" in by_name["model.py"]["diff"]
    text = page.read_text()
    assert "conversion rate" in text and "66.7%" in text
    assert "RC100" in text and "RC114" in text
    assert '<span class="d-add">+        y = mindspore.recompute(self.block, x)</span>' in text
    assert (src / "model.py").read_text() == MODEL, "a report run writes no translation"


def test_translate_report_escapes_file_names_and_code(tmp_path):
    src = make_tree(tmp_path)
    page = tmp_path / "r.html"
    assert main(["translate", str(src), "--report", str(page), "-q"]) == 0
    text = page.read_text()
    assert "&lt;img src=x onerror=alert(1)&gt;.py" in text
    assert "<img" not in text
    assert re.findall(r"<script\b", text) == ["<script"], "the page's own script only"


def test_translate_report_keeps_the_exit_status_and_records_in_place_diffs(tmp_path):
    src = make_tree(tmp_path)
    check = tmp_path / "check.html"
    assert main(["translate", str(src), "--check", "--report", str(check), "-q"]) == 1
    assert check.is_file()
    page = tmp_path / "inplace.html"
    assert main(["translate", str(src), "--in-place", "--report", str(page), "-q"]) == 0
    assert "mindspore.recompute" in (src / "model.py").read_text()
    doc = json.loads(page.with_suffix(".json").read_text())
    diff = next(f["diff"] for f in doc["files"] if f["path"].endswith("model.py"))
    assert "-        y = checkpoint(self.block, x)" in diff


def test_translate_report_with_diff_and_json_still_gives_both(tmp_path, capsys):
    src = make_tree(tmp_path)
    page, extra = tmp_path / "r.html", tmp_path / "sites.json"
    assert main(["translate", str(src), "--diff", "--json", str(extra), "--report", str(page), "-q"]) == 0
    assert "+++ b/" in capsys.readouterr().out, "--diff still prints the diff"
    assert json.loads(extra.read_text())["summary"] == json.loads(page.with_suffix(".json").read_text())["summary"]


def test_translate_report_named_json_is_a_usage_error(tmp_path, capsys):
    src = make_tree(tmp_path)
    assert main(["translate", str(src), "--report", str(tmp_path / "r.json")]) == 2
    assert "give FILE.html" in capsys.readouterr().err
    assert not (tmp_path / "r.json").exists()


# --------------------------------------------------------------------------------------------------- report

def test_report_renders_a_plain_translate_json(tmp_path, capsys):
    src = make_tree(tmp_path)
    sites = tmp_path / "sites.json"
    assert main(["translate", str(src), "--json", str(sites), "-q"]) == 0
    assert main(["report", str(sites)]) == 0
    text = (tmp_path / "sites.html").read_text()
    assert "translation report written" in capsys.readouterr().err
    assert "the diff is not in this JSON" in text and "partial.py" in text


def test_suite_report_expands_failures_and_collapses_passes(tmp_path):
    src = tmp_path / "suite.json"
    src.write_text(json.dumps(suite_doc(depth_sweep=SWEEP)))
    assert main(["report", str(src), "-o", str(tmp_path / "suite.html")]) == 0
    text = (tmp_path / "suite.html").read_text()
    details = re.findall(r"<details( open)?><summary>([^<]*)</summary>", text)
    assert (" open", "torch vs mindspore: FAILED &lt;b&gt;bold&lt;/b&gt;") in details
    assert ("", "torch vs mindspore: PASSED") in details
    assert "row output: too far" in text and "rtol 0.0001, atol 1e-05" in text
    assert "5,024" in text and "1,952" in text and "3,072" in text
    selective = text[text.index('id="selective"'):text.index("<h2>Cases</h2>")]
    for figure in ("63,232", "4,864", "21,248", "67,008", "4,800", "21,184", "0.336", "aten.mm.default x6"):
        assert figure in selective
    assert "aten.relu.default" not in selective, "an op the policy saved no time is not listed"
    graph = text[text.index('id="graph-recompute"'):text.index("<h2>Cases</h2>")]
    assert "layer1.1, layer1.2" in graph and "<td class=\"mono\">layer1.2</td>" in graph
    assert "(top): Mul (cell)\nlayer1\n  1: ReLU (cell)\n    conv1: Conv2D (cell) x2" in graph, \
        "the scopes as a tree: each cell once, its operators counted"
    assert text.count("<polyline") == 4, "plain and recompute for each framework"
    assert "1 of 1 planted bugs caught" in text


def test_suite_report_without_a_sweep_has_no_plot(tmp_path):
    page = html.render(suite_doc())
    assert "<svg" not in page and "failed" in page


def test_mapping_report_lists_every_entry(tmp_path):
    out = tmp_path / "mappings.html"
    assert main(["report", str(ROOT / "docs" / "mappings.json"), "-o", str(out)]) == 0
    doc = json.loads((ROOT / "docs" / "mappings.json").read_text())
    text = out.read_text()
    assert text.count("<tbody class=\"row\" data-row") == len(doc["entries"])
    assert 'data-filter-key="direction"' in text


def test_table_report_lists_every_row_with_differences_open(tmp_path):
    out = tmp_path / "table.html"
    assert main(["report", str(ROOT / "docs" / "table.json"), "-o", str(out)]) == 0
    doc = json.loads((ROOT / "docs" / "table.json").read_text())
    text = out.read_text()
    assert text.count("<tbody class=\"row\" data-row") == len(doc["rows"])
    assert text.count("<details open>") == doc["summary"]["differs"] > 0   # the differences, opened
    assert 'data-filter-key="verdict"' in text and 'data-filter-key="section"' in text


@pytest.mark.parametrize("make", [
    lambda d: html.render(suite_doc(depth_sweep=SWEEP)),
    lambda d: html.render(json.loads((ROOT / "docs" / "mappings.json").read_text())),
    lambda d: html.render(json.loads((ROOT / "docs" / "table.json").read_text())),
])
def test_pages_need_nothing_outside_themselves(make, tmp_path):
    text = make(tmp_path)
    assert "Content-Security-Policy" in text and "default-src 'none'" in text
    assert "<link" not in text and " src=" not in text
    assert not re.search(r"""(href|src)=["']?https?:""", text)


# ---------------------------------------------------------------------------------------------- bad input

@pytest.mark.parametrize("content,expected", [
    (None, "no such file"),
    ("{\"kind\": \"recompat-suite\", \"results\": [", "not valid JSON"),
    ("[1, 2]", "holds a JSON list"),
    ("{\"name\": \"something else\"}", "not a recompat JSON"),
    ("{\"kind\": \"recompat-suite\"}", "without the fields its report needs"),
    (b"\xff\xfe\x00", "not UTF-8"),
])
def test_bad_json_is_exit_2_naming_the_file_and_writes_nothing(tmp_path, capsys, content, expected):
    src = tmp_path / "in.json"
    if isinstance(content, bytes):
        src.write_bytes(content)
    elif content is not None:
        src.write_text(content)
    out = tmp_path / "out.html"
    out.write_text("the old page")
    assert main(["report", str(src), "-o", str(out)]) == 2
    err = capsys.readouterr().err
    assert str(src) in err or src.name in err, err
    assert expected in err
    assert out.read_text() == "the old page", "a failed render leaves the old page as it was"
    assert not leftovers(tmp_path)


def test_malformed_json_error_gives_the_line(tmp_path, capsys):
    src = tmp_path / "in.json"
    src.write_text('{\n  "kind": "recompat-suite",\n  "results": [,]\n}\n')
    assert main(["report", str(src)]) == 2
    assert f"{src}:3:" in capsys.readouterr().err


def test_unwritable_output_is_exit_2_and_leaves_nothing(tmp_path, capsys):
    src = tmp_path / "suite.json"
    src.write_text(json.dumps(suite_doc()))
    blocker = tmp_path / "file.txt"
    blocker.write_text("a file, not a folder")
    assert main(["report", str(src), "-o", str(blocker / "out.html")]) == 2
    assert f"{blocker / 'out.html'}: cannot write it" in capsys.readouterr().err
    (tmp_path / "a_dir").mkdir()
    assert main(["report", str(src), "-o", str(tmp_path / "a_dir")]) == 2
    assert "is a folder" in capsys.readouterr().err
    assert main(["report", str(src), "-o", str(src)]) == 2
    assert "is the JSON itself" in capsys.readouterr().err
    assert json.loads(src.read_text())["kind"] == "recompat-suite"
    assert not leftovers(tmp_path)


def test_a_replaced_file_keeps_its_permission_bits_and_a_new_one_gets_the_umasks(tmp_path):
    """recompat._files.write_atomic, the writer of every file recompat writes (pages, JSON, docs, translated files,
    recorded runs): a file it replaces keeps its permission bits, a new one gets what open() would give it (not
    the temporary file's 0o600), and an explicit mode wins."""
    from recompat._files import default_mode, write_atomic

    src = tmp_path / "suite.json"
    src.write_text(json.dumps(suite_doc()))
    page = tmp_path / "suite.html"
    assert main(["report", str(src), "-o", str(page)]) == 0
    assert stat.S_IMODE(page.stat().st_mode) == default_mode()
    page.chmod(0o640)
    doc = suite_doc()
    doc["results"][0]["message"] = "torch vs mindspore: FAILED again"
    src.write_text(json.dumps(doc))
    before = page.read_bytes()
    assert main(["report", str(src), "-o", str(page)]) == 0
    assert page.read_bytes() != before and stat.S_IMODE(page.stat().st_mode) == 0o640
    write_atomic(page, "by hand", mode=0o600)
    assert page.read_text() == "by hand" and stat.S_IMODE(page.stat().st_mode) == 0o600
    assert not leftovers(tmp_path)


# ------------------------------------------------------------------------------------------------ recompat test

@pytest.mark.runtime
def test_recompat_test_report_end_to_end(tmp_path):
    page = tmp_path / "suite.html"
    proc = subprocess.run(
        [sys.executable, "-m", "recompat", "test", "-k", "seed_fc and cross and plain", "--device", "cpu",
         "--ms-mode", "pynative", "-q", "--report", str(page)],
        capture_output=True, text=True, env=dict(os.environ, GLOG_v="3"), timeout=300, cwd=tmp_path)
    assert proc.returncode == 0, proc.stdout[-3000:] + proc.stderr[-3000:]
    doc = json.loads(page.with_suffix(".json").read_text())
    assert [r["id"] for r in doc["results"]] == ["seed_fc-cross-plain-cpu-pynative"]
    depths = [p["depth"] for p in doc["depth_sweep"]["points"] if p["framework"] == "torch"]
    assert depths == sorted(depths) and len(depths) >= 3
    deepest = max(doc["depth_sweep"]["points"], key=lambda p: p["depth"])
    assert deepest["recompute_bytes"] < deepest["plain_bytes"] / 2, "recompute keeps far less at depth"
    text = page.read_text()
    assert "seed_fc" in text and "<svg" in text and "Bytes kept for backward vs depth" in text
