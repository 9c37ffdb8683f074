"""The HTML reports and docs in a real browser: headless Chromium driven by Selenium through chromedriver.

Each page is opened from disk as a user would open it; the tests assert that the browser logs no console error
(a blocked script, a refused fetch, a script error), that filtering and sorting change what is shown, and that a
file name carrying markup shows as text and runs nothing. A screenshot of each page is kept as a test artifact in
out/test-artifacts/ (or $RECOMPAT_ARTIFACTS).

Needs Debian's chromium and chromium-driver (`apt-get install -y chromium chromium-driver`; .ci/run installs them).
Without them these tests skip and say so, except in CI (CI set), where they must run.
"""
from __future__ import annotations

import json
import os
import shutil
from pathlib import Path

import pytest

from recompat.cli import main

from test_demo import demo_doc
from test_reports import EVIL, SWEEP, make_tree, suite_doc

ROOT = Path(__file__).resolve().parent.parent
ARTIFACTS = Path(os.environ.get("RECOMPAT_ARTIFACTS") or ROOT / "out" / "test-artifacts")
INSTALL = "install Debian's chromium and chromium-driver: apt-get install -y chromium chromium-driver"


def _unavailable(why: str):
    if os.environ.get("CI"):
        pytest.fail(f"browser tests cannot run: {why} — in CI they must ({INSTALL}; .ci/run does it)", pytrace=False)
    pytest.skip(f"no headless browser: {why} — {INSTALL}")


@pytest.fixture(scope="module")
def browser(tmp_path_factory):
    chromium = next((p for p in map(shutil.which, ("chromium", "chromium-browser", "google-chrome")) if p), None)
    driver_path = shutil.which("chromedriver")
    if chromium is None or driver_path is None:
        _unavailable("chromium" + (" and chromedriver are" if driver_path is None and chromium is None else
                                   " is" if chromium is None else "driver is") + " not installed")
    try:
        from selenium import webdriver
        from selenium.webdriver.chrome.service import Service
    except ImportError:
        _unavailable("the selenium package is missing (pip install -e '.[test]')")
    options = webdriver.ChromeOptions()
    options.binary_location = chromium
    for arg in ("--headless=new", "--no-sandbox", "--disable-gpu", "--disable-dev-shm-usage", "--no-first-run",
                "--disable-background-networking", "--disable-component-update", "--disable-sync",
                "--disable-quic", "--window-size=1280,900",
                f"--user-data-dir={tmp_path_factory.mktemp('chromium-profile')}"):
        options.add_argument(arg)
    options.set_capability("goog:loggingPrefs", {"browser": "ALL"})
    drv = webdriver.Chrome(service=Service(driver_path), options=options)
    drv.set_page_load_timeout(30)
    yield drv
    drv.quit()


def open_page(drv, path: Path):
    drv.get(path.resolve().as_uri())
    drv.get_log("browser")   # nothing from an earlier page counts against this one
    drv.refresh()


def console_errors(drv) -> list[str]:
    return [e["message"] for e in drv.get_log("browser") if e["level"] in ("SEVERE", "WARNING")]


def shown(drv, scope: str) -> list[str]:
    """The visible rows of a filterable block, top to bottom, by their first cell's text."""
    return drv.execute_script(
        "return Array.from(document.querySelectorAll(arguments[0] + ' [data-row]'))"
        ".filter(r => r.offsetParent !== null).map(r => r.querySelector('td').textContent.trim());", scope)


def screenshot(drv, name: str) -> Path:
    ARTIFACTS.mkdir(parents=True, exist_ok=True)
    path = ARTIFACTS / f"{name}.png"
    drv.save_screenshot(str(path))
    assert path.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n", f"{path}: not a PNG"
    return path


def type_filter(drv, scope: str, text: str):
    from selenium.webdriver.common.by import By

    box = drv.find_element(By.CSS_SELECTOR, f"{scope} input[data-filter-text]")
    box.clear()
    box.send_keys(text)


def choose(drv, scope: str, key: str, value: str):
    from selenium.webdriver.common.by import By
    from selenium.webdriver.support.ui import Select

    Select(drv.find_element(By.CSS_SELECTOR, f"{scope} select[data-filter-key='{key}']")).select_by_value(value)


def click_sort(drv, scope: str, key: str):
    from selenium.webdriver.common.by import By

    drv.find_element(By.CSS_SELECTOR, f"{scope} button[data-sort='{key}']").click()


def test_translation_report_filters_sorts_and_shows_markup_as_text(browser, tmp_path):
    src = make_tree(tmp_path)
    page = tmp_path / "translate.html"
    assert main(["translate", str(src), "--report", str(page), "-q"]) == 0
    open_page(browser, page)
    assert console_errors(browser) == []
    rows = shown(browser, "#files")
    assert sorted(Path(r).name for r in rows) == sorted(["model.py", "partial.py", EVIL])
    assert browser.execute_script("return document.images.length") == 0, "the file name became an <img>"

    type_filter(browser, "#files", "onerror")
    assert [Path(r).name for r in shown(browser, "#files")] == [EVIL], "the markup shows as the file's name"
    type_filter(browser, "#files", "")
    choose(browser, "#files", "status", "partial")
    assert [Path(r).name for r in shown(browser, "#files")] == ["partial.py"]
    choose(browser, "#files", "status", "")
    click_sort(browser, "#files", "path")
    ascending = shown(browser, "#files")
    click_sort(browser, "#files", "path")
    assert shown(browser, "#files") == list(reversed(ascending)) != ascending
    assert "3 of 3 shown" in browser.page_source
    assert console_errors(browser) == []
    screenshot(browser, "translation-report")


def test_suite_report_expands_failures_filters_and_plots(browser, tmp_path):
    src = tmp_path / "suite.json"
    src.write_text(json.dumps(suite_doc(depth_sweep=SWEEP)))
    page = tmp_path / "suite.html"
    assert main(["report", str(src), "-o", str(page)]) == 0
    open_page(browser, page)
    assert console_errors(browser) == []
    opened = browser.execute_script(
        "return Array.from(document.querySelectorAll('#cases details')).map(d => d.open);")
    assert opened == [True, False, False, False, True, False], "failures expanded, the rest collapsed"
    assert len(shown(browser, "#cases")) == 6
    assert shown(browser, "#graph-recompute") == ["res"]
    tree = browser.execute_script("return document.querySelector('#graph-recompute details').open;")
    assert tree is False, "the scope tree is collapsed until asked for"
    assert shown(browser, "#selective") == ["sac", "sac"], "three figures per model and framework"
    type_filter(browser, "#selective", "mindspore")
    assert shown(browser, "#selective") == ["sac"]
    type_filter(browser, "#selective", "")
    choose(browser, "#cases", "status", "failed")
    assert shown(browser, "#cases") == ["mlp", "res"]
    choose(browser, "#cases", "status", "")
    choose(browser, "#cases", "device", "gpu")
    assert shown(browser, "#cases") == ["conv"]
    choose(browser, "#cases", "device", "")
    type_filter(browser, "#cases", "MINDSPORE-recompute")
    assert shown(browser, "#cases") == ["conv"], "the filter ignores case"
    size = browser.execute_script("const r = document.querySelector('svg').getBoundingClientRect();"
                                  "return [r.width, r.height];")
    assert size[0] > 300 and size[1] > 150, "the plot is drawn"
    assert console_errors(browser) == []
    screenshot(browser, "suite-report")


def _training_result(pair: str, smoothing: float) -> dict:
    """A recompat_train result, as the plugin writes it: a linear pair trained 4 steps; torch's loss smooths labels
    by ``smoothing``, the port's never does."""
    import numpy as np
    import torch
    from mindspore import nn

    from recompat.compat import compare_training

    torch.manual_seed(0)
    torch_model, ms_model = torch.nn.Linear(8, 4), nn.Dense(8, 4)
    rng = np.random.default_rng(0)
    batches = [(rng.standard_normal((6, 8)).astype(np.float32), rng.integers(0, 4, 6)) for _ in range(2)]
    report = compare_training(torch_model, ms_model, batches, steps=4,
                              loss=torch.nn.CrossEntropyLoss(label_smoothing=smoothing),
                              optimizer=torch.optim.SGD(torch_model.parameters(), lr=0.1),
                              mindspore_loss=nn.CrossEntropyLoss())
    return {"id": f"test_train[{pair}]", "check": "training", "pair": pair, "device": "cpu", "ms_mode": "pynative",
            "status": "passed" if report.passed else "failed", "message": str(report).splitlines()[0],
            "report": report.to_dict()}


@pytest.mark.runtime
def test_suite_report_draws_training_curves(browser, tmp_path):
    doc = {"format": 1, "kind": "recompat-suite", "meta": {}, "totals": {},
           "results": [_training_result("port", 0.0), _training_result("dropped-smoothing", 0.1)]}
    src, page = tmp_path / "suite.json", tmp_path / "suite.html"
    src.write_text(json.dumps(doc))
    assert main(["report", str(src), "-o", str(page)]) == 0
    open_page(browser, page)
    assert console_errors(browser) == []
    opened = browser.execute_script("return Array.from(document.querySelectorAll('#cases details')).map(d => d.open);")
    assert opened == [False, True], "the failing run expanded"
    # loss (torch, MindSpore, the float64 run) and divergence per step; only the open one is drawn on screen
    charts = browser.execute_script(
        "return Array.from(document.querySelectorAll('#cases svg[data-chart]')).map(s => [s.dataset.chart, "
        "s.querySelectorAll('polyline').length, s.checkVisibility(), s.getBoundingClientRect().width > 100]);")
    assert charts == [["loss", 3, False, True], ["divergence", 1, False, True],
                      ["loss", 3, True, True], ["divergence", 1, True, True]]
    marks = browser.execute_script("return document.querySelectorAll('#cases details[open] svg line title').length")
    assert marks == 2, "the first step out of tolerance is marked in both charts"
    screenshot(browser, "suite-training")


def test_mapping_report_filters_by_direction_and_text(browser, tmp_path):
    page = tmp_path / "mappings.html"
    assert main(["report", str(ROOT / "docs" / "mappings.json"), "-o", str(page)]) == 0
    doc = json.loads((ROOT / "docs" / "mappings.json").read_text())
    open_page(browser, page)
    assert console_errors(browser) == []
    assert len(shown(browser, "#entries")) == len(doc["entries"])
    choose(browser, "#entries", "direction", "mindspore-to-torch")
    expected = [e["torch"]["api"] for e in doc["entries"] if e["direction"] == "mindspore-to-torch"]
    assert shown(browser, "#entries") == expected and 0 < len(expected) < len(doc["entries"])
    choose(browser, "#entries", "direction", "")
    type_filter(browser, "#entries", "checkpoint_wrapper.checkpoint_wrapper")
    assert shown(browser, "#entries") == ["torch.distributed.algorithms._checkpoint.checkpoint_wrapper.checkpoint_wrapper"]
    assert console_errors(browser) == []
    screenshot(browser, "mapping-report")


def test_table_report_filters_by_verdict_and_section(browser, tmp_path):
    page = tmp_path / "table.html"
    assert main(["report", str(ROOT / "docs" / "table.json"), "-o", str(page)]) == 0
    doc = json.loads((ROOT / "docs" / "table.json").read_text())
    open_page(browser, page)
    assert console_errors(browser) == []
    assert len(shown(browser, "#rows")) == len(doc["rows"])
    choose(browser, "#rows", "verdict", "differs")
    expected = [r["torch_api"] for r in doc["rows"] if r["verdict"] == "differs"]
    assert sorted(shown(browser, "#rows")) == sorted(expected) and expected
    choose(browser, "#rows", "verdict", "")
    choose(browser, "#rows", "section", "torch.linalg")
    assert shown(browser, "#rows") == [r["torch_api"] for r in doc["rows"] if r["section"] == "torch.linalg"]
    assert console_errors(browser) == []
    screenshot(browser, "table-report")


def test_demo_report_filters_models_and_expands_mismatches(browser, tmp_path, capsys):
    page = tmp_path / "demo.html"
    assert main(["report", str(demo_doc(tmp_path, capsys)), "-o", str(page)]) == 0
    open_page(browser, page)
    assert console_errors(browser) == []
    assert shown(browser, "#models") == ["mlp", "planted"]
    opened = browser.execute_script("return Array.from(document.querySelectorAll('#models details')).map(d => d.open);")
    assert opened == [False, True], "a mismatch expanded, an agreement collapsed"
    assert browser.execute_script("return document.images.length") == 0, "the reason's markup became an <img>"
    # the mismatch's training: loss per step (torch, MindSpore, the float64 run) and divergence, as inline SVG
    charts = browser.execute_script(
        "return Array.from(document.querySelectorAll('#models svg[data-chart]')).map(s => [s.dataset.chart, "
        "s.querySelectorAll('polyline').length, s.querySelectorAll('circle').length, "
        "s.getBoundingClientRect().width > 100]);")
    assert charts == [["loss", 3, 15, True], ["divergence", 1, 5, True]]
    tips = browser.execute_script("return Array.from(document.querySelectorAll('svg[data-chart] circle title'))"
                                  ".map(t => t.textContent);")
    assert "MindSpore, step 3: loss 0.95" in tips and "step 5: divergence 0.01" in tips
    choose(browser, "#models", "status", "mismatch")
    assert shown(browser, "#models") == ["planted"]
    choose(browser, "#models", "status", "")
    type_filter(browser, "#apis", "torch.nn.Linear")
    assert shown(browser, "#apis") == ["torch.nn.Linear"]
    assert shown(browser, "#files"), "the translation's files are listed too"
    assert console_errors(browser) == []
    screenshot(browser, "demo-report")


@pytest.mark.parametrize("page", ["index.html", "en/index.html", "en/checkpoint.html", "zh/checkpoint.html",
                                  "behaviours.html", "en/table.html", "zh/table.html"])
def test_docs_pages_open_without_errors(browser, page):
    open_page(browser, ROOT / "docs" / page)
    assert console_errors(browser) == []
    assert browser.execute_script("return document.querySelectorAll('h1').length") == 1
    if page.endswith("checkpoint.html"):
        rows = browser.execute_script("return document.querySelectorAll('table')[0].rows.length")
        assert rows == 11, "the header and one row per parameter"
    screenshot(browser, "docs-" + page.replace("/", "-").removesuffix(".html"))
