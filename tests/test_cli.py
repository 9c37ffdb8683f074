"""The `recompat translate` / `recompat demo` command as a user sees it: flags, exit codes, files
written or not, messages on stderr, the JSON report, bad input.

Pure text: nothing here imports torch or MindSpore (the sources below only mention them).
"""
from __future__ import annotations

import ast
import json
import os
import stat
import subprocess
import sys
from pathlib import Path

import pytest

import recompat
from recompat import cli
from conftest import TORCH_CHECKPOINT_MODEL
from recompat.cli import main
from recompat.translator import engine

# A torch model whose checkpoint call the translator converts.
MODEL = TORCH_CHECKPOINT_MODEL
# Mentions the trigger word (so it is parsed) but has nothing to translate.
MENTIONS = 'CHECKPOINT_DIR = "ckpt"  # where checkpoint files go\n'
# Does not mention it (passed over without parsing).
PLAIN = "import os\n\n\ndef here():\n    return os.getcwd()\n"

PAST = 1_000_000_000  # an mtime far in the past: a rewrite shows as a new mtime


def make_tree(root: Path) -> Path:
    files = {
        "pkg/__init__.py": "",
        "pkg/model.py": MODEL,
        "pkg/sub/deep.py": MODEL.replace("Net", "Deep"),
        "pkg/sub/mentions.py": MENTIONS,
        "pkg/plain.py": PLAIN,
        "README.md": "# a project\n",
        "pkg/sub/conf.yaml": "a: 1\n",
        ".git/hooks/pre.py": MODEL,           # never walked into
        "pkg/__pycache__/model.py": MODEL,    # never walked into
    }
    for rel, text in files.items():
        p = root / rel
        p.parent.mkdir(parents=True, exist_ok=True)
        p.write_text(text)
    (root / "pkg/data.bin").write_bytes(bytes(range(256)) * 4)
    age(root)
    return root


def age(root: Path) -> None:
    for p in root.rglob("*"):
        if p.is_file() and not p.is_symlink():
            os.utime(p, (PAST, PAST))


def snapshot(root: Path) -> dict[str, tuple]:
    """Every entry under root: bytes (or link target), mtime, mode."""
    snap = {}
    for p in sorted(root.rglob("*")):
        st = p.lstat()
        if p.is_symlink():
            snap[str(p.relative_to(root))] = ("link", os.readlink(p))
        elif p.is_file():
            snap[str(p.relative_to(root))] = (p.read_bytes(), st.st_mtime_ns, stat.S_IMODE(st.st_mode))
    return snap


def run(capsys, *argv: str) -> tuple[int, str, str]:
    code = main([str(a) for a in argv])
    out, err = capsys.readouterr()
    return code, out, err


def assert_translated(data: bytes) -> None:
    text = data.decode()
    ast.parse(text)
    assert "mindspore.recompute(self.block, x)" in text
    assert "torch.utils.checkpoint" not in text


def no_temp_files(root: Path) -> None:
    leftovers = [p for p in root.rglob("*.tmp")]
    assert leftovers == [], f"temporary files left behind: {leftovers}"


# --- the command itself ------------------------------------------------------------------------


def test_help_via_python_m_and_console_script(tmp_path):
    r = subprocess.run([sys.executable, "-m", "recompat", "--help"], capture_output=True, text=True)
    assert r.returncode == 0
    assert "translate" in r.stdout and "demo" in r.stdout and "exit status" in r.stdout
    r = subprocess.run([sys.executable, "-m", "recompat", "translate", "--help"], capture_output=True, text=True)
    assert r.returncode == 0
    for flag in ("--in-place", "--diff", "--check", "--json", "--exclude", "--jobs", "--quiet", "--style", "--to"):
        assert flag in r.stdout
    assert "examples:" in r.stdout
    for command in ("demo", "test", "docs"):      # every command's help renders (its defaults included)
        r = subprocess.run([sys.executable, "-m", "recompat", command, "--help"], capture_output=True, text=True)
        assert r.returncode == 0 and "usage:" in r.stdout, (command, r.stderr)
    assert "round-off rule" in subprocess.run([sys.executable, "-m", "recompat", "demo", "--help"],
                                              capture_output=True, text=True).stdout

    # --help loads neither the frameworks nor the translator.
    r = subprocess.run([sys.executable, "-c", "import sys; from recompat.cli import main\n"
                        "try: main(['translate', '--help'])\nexcept SystemExit: pass\n"
                        "print([m for m in ('torch', 'mindspore', 'jsonschema', 'yaml', 'recompat.translator')"
                        " if m in sys.modules], file=sys.stderr)"], capture_output=True, text=True)
    assert r.stderr.strip() == "[]", r.stderr

    script = Path(sys.executable).parent / "recompat"
    assert script.exists(), "the console script `recompat` is not installed (pip install -e .)"
    r = subprocess.run([str(script), "--version"], capture_output=True, text=True)
    assert r.returncode == 0 and r.stdout.strip() == f"recompat {recompat.__version__}"
    # The console script translates, without torch or MindSpore (nor tqdm: stderr is no terminal).
    (tmp_path / "m.py").write_text(MODEL)
    r = subprocess.run([str(script), "translate", str(tmp_path / "m.py"), "--check"], capture_output=True, text=True)
    assert r.returncode == 1 and "1 file would change" in r.stderr
    probe = ("import sys; from recompat.cli import main; code = main(['translate', sys.argv[1], '--check', '-q']);"
             "print(code, [m for m in ('torch', 'mindspore', 'tqdm') if m in sys.modules])")
    r = subprocess.run([sys.executable, "-c", probe, str(tmp_path / "m.py")], capture_output=True, text=True)
    assert r.stdout.strip() == "1 []", r.stdout + r.stderr


def test_version(capsys):
    with pytest.raises(SystemExit) as exc:
        main(["--version"])
    assert exc.value.code == 0
    assert capsys.readouterr().out.strip() == f"recompat {recompat.__version__}"


def test_no_command_is_a_usage_error(capsys):
    assert main([]) == 2
    assert "translate" in capsys.readouterr().err


@pytest.mark.parametrize("argv", [
    ["translate"],                                          # no PATH
    ["translate", ".", "--in-place", "--diff"],
    ["translate", ".", "--in-place", "--check"],
    ["translate", ".", "-o", "x", "--in-place"],
    ["translate", ".", "-o", "x", "--check"],
    ["translate", ".", "--diff", "--check"],
    ["translate", ".", "--to", "paddle"],
    ["translate", ".", "--style", "decorator"],
    ["translate", ".", "-j", "-1"],
    ["translate", ".", "-j", "many"],
    ["translate", ".", "--bogus"],
])
def test_usage_errors_exit_2(capsys, argv):
    with pytest.raises(SystemExit) as exc:
        main(argv)
    assert exc.value.code == 2
    assert "usage:" in capsys.readouterr().err


WRAPPER = """\
import torch.nn as nn
from torch.utils.checkpoint import checkpoint


class Wrapper(nn.Module):
    def __init__(self, module: nn.Module):
        super().__init__()
        self.module = module

    def forward(self, x):
        return checkpoint(self.module, x, use_reentrant=False)
"""


@pytest.mark.parametrize("style, expected", [
    ((), ["self.module.recompute(use_reentrant=False, early_stop=False)", "return self.module(x)"]),
    (("--style", "cell"), ["self.module.recompute(use_reentrant=False, early_stop=False)", "return self.module(x)"]),
    (("--style", "function"), ["return mindspore.recompute(self.module, x, use_reentrant=False, early_stop=False)"]),
], ids=["default", "cell", "function"])
def test_the_default_style_marks_a_cell_only_called_under_checkpoint(tmp_path, capsys, style, expected):
    (tmp_path / "w.py").write_text(WRAPPER)
    code, out, err = run(capsys, "translate", tmp_path / "w.py", "--diff", *style)
    assert code == 0, err
    assert all(f"+        {line}" in out for line in expected), out
    assert ("RC140" in err) == (style != ("--style", "function"))


def test_style_is_refused_with_to_torch(tmp_path, capsys):
    (tmp_path / "w.py").write_text(WRAPPER)
    code, out, err = run(capsys, "translate", tmp_path / "w.py", "--to", "torch", "--style", "cell")
    assert code == 2 and "--style cell shapes MindSpore output only" in err
    assert run(capsys, "translate", tmp_path / "w.py", "--to", "torch")[0] == 0


def test_to_torch_runs_on_a_torch_tree(tmp_path, capsys):
    tree = make_tree(tmp_path / "src")
    before = snapshot(tree)
    code, out, err = run(capsys, "translate", tree, "--to", "torch", "--in-place")
    assert code == 0 and "Traceback" not in err
    assert snapshot(tree) == before   # a torch tree has no MindSpore recompute to rewrite


# --- modes -------------------------------------------------------------------------------------


def test_report_only_writes_nothing_and_says_so(tmp_path, capsys):
    tree = make_tree(tmp_path / "src")
    before = snapshot(tree)
    code, out, err = run(capsys, "translate", tree)
    assert code == 0
    assert out == ""
    assert snapshot(tree) == before
    model = os.path.join(str(tree), "pkg", "model.py")
    assert f"{model}:11:13: RC100 [converted] torch.utils.checkpoint.checkpoint -> mindspore.recompute" in err
    assert "5 files scanned, 3 examined, 2 changed, 0 failed" in err   # .git and __pycache__ skipped
    assert "2 sites: 2 converted, 0 partial, 0 manual; conversion rate 100.0% (100.0% rewritten)" in err
    assert "lines/s" in err
    assert "nothing written" in err and "--in-place" in err and "-o DIR" in err


def test_quiet_hides_site_lines_but_not_the_summary(tmp_path, capsys):
    tree = make_tree(tmp_path / "src")
    code, out, err = run(capsys, "translate", tree, "-q")
    assert code == 0
    assert "RC100" not in err
    assert "files scanned" in err and "conversion rate" in err


def test_diff_prints_unified_diff_and_writes_nothing(tmp_path, capsys, monkeypatch):
    tree = make_tree(tmp_path / "src")
    before = snapshot(tree)
    monkeypatch.chdir(tree)
    code, out, err = run(capsys, "translate", "pkg", "--diff")
    assert code == 0
    assert snapshot(tree) == before
    assert "--- a/pkg/model.py\n+++ b/pkg/model.py\n" in out
    assert "--- a/pkg/sub/deep.py\n+++ b/pkg/sub/deep.py\n" in out
    assert "-        y = checkpoint(self.block, x)\n+        y = mindspore.recompute(self.block, x)\n" in out
    assert "mentions.py" not in out and "plain.py" not in out
    assert out.index("pkg/model.py") < out.index("pkg/sub/deep.py")   # sorted
    assert "nothing written" in err


def test_check_exit_codes_and_writes_nothing(tmp_path, capsys):
    tree = make_tree(tmp_path / "src")
    before = snapshot(tree)
    code, out, err = run(capsys, "translate", tree, "--check")
    assert code == 1
    assert snapshot(tree) == before
    assert f"would change: {tree / 'pkg' / 'model.py'}" in err
    assert "2 files would change" in err
    code, out, err = run(capsys, "translate", tree / "pkg" / "sub" / "mentions.py", tree / "pkg" / "plain.py",
                         "--check")
    assert code == 0
    assert "nothing would change" in err


def test_in_place_rewrites_only_changed_files(tmp_path, capsys):
    tree = make_tree(tmp_path / "src")
    (tree / "pkg" / "model.py").chmod(0o640)
    before = snapshot(tree)
    code, out, err = run(capsys, "translate", tree, "--in-place")
    assert code == 0, err
    after = snapshot(tree)
    assert_translated(after["pkg/model.py"][0])
    assert_translated(after["pkg/sub/deep.py"][0])
    assert after["pkg/model.py"][2] == 0o640, "the original's permission bits are kept"
    assert after["pkg/model.py"][1] != before["pkg/model.py"][1]
    for rel in before:
        if rel not in ("pkg/model.py", "pkg/sub/deep.py"):
            assert after[rel] == before[rel], f"{rel} has nothing to change and must not be rewritten"
    assert "rewrote 2 files in place" in err
    no_temp_files(tree)
    # Translating the output again changes nothing.
    again = snapshot(tree)
    code, out, err = run(capsys, "translate", tree, "--in-place")
    assert code == 0 and snapshot(tree) == again
    assert run(capsys, "translate", tree, "--check")[0] == 0


def test_output_mirrors_the_tree(tmp_path, capsys):
    tree = make_tree(tmp_path / "src")
    before = snapshot(tree)
    dest = tmp_path / "out"
    code, out, err = run(capsys, "translate", tree, "-o", dest)
    assert code == 0, err
    assert snapshot(tree) == before, "the input is never changed"
    got = snapshot(dest)
    assert set(got) == {rel for rel in before if not rel.startswith((".git", "pkg/__pycache__"))}
    for rel, (data, _, mode) in got.items():
        if rel in ("pkg/model.py", "pkg/sub/deep.py"):
            assert_translated(data)
        else:
            assert data == before[rel][0], f"{rel} is copied byte for byte"
        assert mode == before[rel][2]
    assert f"wrote 2 translated and 6 copied files into {dest}" in err
    # A second run finds everything in place and rewrites nothing.
    age(dest)
    again = snapshot(dest)
    code, out, err = run(capsys, "translate", tree, "-o", dest)
    assert code == 0 and snapshot(dest) == again
    assert "8 already up to date" in err
    no_temp_files(dest)


def test_output_of_a_single_file_and_of_several_roots(tmp_path, capsys):
    tree = make_tree(tmp_path / "src")
    code, _, err = run(capsys, "translate", tree / "pkg" / "model.py", "-o", tmp_path / "one")
    assert code == 0, err
    assert [p.name for p in (tmp_path / "one").iterdir()] == ["model.py"]
    other = tmp_path / "other"
    other.mkdir()
    (other / "x.py").write_text(MODEL)
    code, _, err = run(capsys, "translate", tree / "pkg", other, "-o", tmp_path / "two")
    assert code == 0, err
    assert_translated((tmp_path / "two" / "src" / "pkg" / "model.py").read_bytes())
    assert_translated((tmp_path / "two" / "other" / "x.py").read_bytes())


def test_output_inside_the_input_is_not_walked_into(tmp_path, capsys):
    tree = make_tree(tmp_path / "src")
    code, _, err = run(capsys, "translate", tree, "-o", tree / "translated")
    assert code == 0, err
    assert_translated((tree / "translated" / "pkg" / "model.py").read_bytes())
    assert not (tree / "translated" / "translated").exists()
    # and a second run does not pick up the first run's output as input
    code, _, err = run(capsys, "translate", tree, "-o", tree / "translated")
    assert code == 0 and not (tree / "translated" / "translated").exists()
    assert "5 files scanned" in err


def test_output_equal_to_the_input_is_refused(tmp_path, capsys):
    tree = make_tree(tmp_path / "src")
    before = snapshot(tree)
    code, _, err = run(capsys, "translate", tree, "-o", tree)
    assert code == 2
    assert "--in-place" in err
    assert snapshot(tree) == before


def test_json_report(tmp_path, capsys):
    tree = make_tree(tmp_path / "src")
    (tree / "pkg" / "broken.py").write_text("from torch.utils.checkpoint import checkpoint\ndef f(:\n")
    report = tmp_path / "report.json"
    code, out, err = run(capsys, "translate", tree, "--check", "--json", report, "-q")
    assert code == 2
    doc = json.loads(report.read_text())
    assert doc["version"] == recompat.__version__
    assert doc["arguments"]["paths"] == [str(tree)]
    assert doc["arguments"]["check"] is True and doc["arguments"]["mode"] == "check"
    assert doc["exit_code"] == 2
    files = {Path(f["path"]).name: f for f in doc["files"]}
    assert set(files) == {"model.py", "deep.py", "broken.py"}   # files with sites or errors only
    model = files["model.py"]
    assert model["changed"] is True and model["error"] is None
    (site,) = model["sites"]
    assert (site["line"], site["col"], site["status"]) == (11, 13, "converted")
    assert site["api"] == "torch.utils.checkpoint.checkpoint"
    assert {d["code"] for d in site["diagnostics"]} >= {"RC100"}
    assert "broken.py" in files["broken.py"]["error"]
    s = doc["summary"]
    assert (s["files_scanned"], s["files_examined"], s["files_changed"], s["files_failed"]) == (6, 4, 2, 1)
    assert s["sites"] == {"converted": 2, "partial": 0, "manual": 0, "total": 2}
    assert s["conversion_rate"] == 1.0 and s["rewritten_rate"] == 1.0
    assert s["lines"] > 0 and s["elapsed_s"] > 0
    no_temp_files(tmp_path)


def test_json_to_stdout(tmp_path, capsys):
    (tmp_path / "m.py").write_text(MODEL)
    code, out, err = run(capsys, "translate", tmp_path, "--json", "-", "-q")
    assert code == 0
    assert json.loads(out)["summary"]["files_changed"] == 1


def test_exclude(tmp_path, capsys):
    tree = make_tree(tmp_path / "src")
    (tree / "legacy").mkdir()
    (tree / "legacy" / "old.py").write_text("import torch.utils.checkpoint\nprint 'x'\n")   # would fail if it were looked at
    (tree / "gen_pb2.py").write_text(MODEL)
    dest = tmp_path / "out"
    code, _, err = run(capsys, "translate", tree, "-o", dest, "--exclude", "legacy", "--exclude", "*_pb2.py",
                       "--exclude", "pkg/sub/*")
    assert code == 0, err
    assert not (dest / "legacy").exists() and not (dest / "gen_pb2.py").exists()
    assert not (dest / "pkg" / "sub").exists()
    assert_translated((dest / "pkg" / "model.py").read_bytes())
    assert "3 files scanned" in err   # pkg/__init__.py, pkg/model.py, pkg/plain.py
    # a name given on the command line is excluded the same way
    code, _, err = run(capsys, "translate", tree / "gen_pb2.py", "--exclude", "*_pb2.py", "--check")
    assert code == 0 and "no Python files found" in err


def test_jobs_2_gives_the_same_result_as_jobs_1(tmp_path, capsys):
    tree = make_tree(tmp_path / "src")
    for i in range(12):
        (tree / "pkg" / f"m{i:02d}.py").write_text(MODEL if i % 3 else MENTIONS)
    (tree / "pkg" / "bad.py").write_text("import torch.utils.checkpoint\ncheckpoint(\n")
    results = {}
    for jobs in ("1", "2", "0"):
        dest, js = tmp_path / f"out{jobs}", tmp_path / f"r{jobs}.json"
        code, _, err = run(capsys, "translate", tree, "-o", dest, "-j", jobs, "--json", js)
        out = run(capsys, "translate", tree, "--diff", "-q", "-j", jobs)[1]
        doc = json.loads(js.read_text())
        for k in ("elapsed_s", "lines_per_s"):
            doc["summary"].pop(k)
        doc["arguments"].pop("jobs")
        doc["arguments"].pop("output")
        doc["arguments"].pop("json_path")
        files = {rel: data for rel, (data, _, _) in snapshot(dest).items()}
        err_lines = [line.replace(str(dest), "DEST") for line in err.splitlines() if "lines/s" not in line]
        results[jobs] = (code, out, err_lines, doc, files)
    assert results["1"][0] == 2
    assert results["2"] == results["1"]
    assert results["0"] == results["1"]


def test_the_default_uses_the_cpus_on_a_large_tree_only(tmp_path, capsys, monkeypatch):
    """`translate` without -j: a small tree is translated in this process (no worker to start); a large one in
    one worker per CPU, with what one process gives."""
    import concurrent.futures

    pools = []

    class Counted(concurrent.futures.ProcessPoolExecutor):
        def __init__(self, max_workers=None, **kw):
            pools.append(max_workers)
            super().__init__(max_workers=max_workers, **kw)

    monkeypatch.setattr(concurrent.futures, "ProcessPoolExecutor", Counted)
    monkeypatch.setattr(engine, "cpus", lambda: 2)
    small = make_tree(tmp_path / "small")
    assert run(capsys, "translate", small, "--check", "-q")[0] == 1
    assert pools == [], "a small tree starts no worker"

    large = tmp_path / "large"
    for i in range(24):   # some 350 KB: room for both CPUs
        write = large / "pkg" / f"m{i:02d}.py"
        write.parent.mkdir(parents=True, exist_ok=True)
        write.write_text(MODEL + "".join(f"\n\ndef pad{k}(x):\n    return x + {k}\n" for k in range(400)))
    (large / "pkg" / "__init__.py").write_text("")
    outputs = {}
    for jobs in (["-j", "1"], []):
        dest = tmp_path / f"out{len(jobs)}"
        assert run(capsys, "translate", large, "-o", dest, "-q", *jobs)[0] == 0
        outputs[len(jobs)] = {p.relative_to(dest): p.read_bytes() for p in dest.rglob("*.py")}
    assert pools == [2], "the default ran the large tree in one worker per CPU"
    assert outputs[0] == outputs[2] and len(outputs[0]) == 25


BASE = """\
from functools import partial

import torch
from torch.utils.checkpoint import checkpoint


class PreTrained(torch.nn.Module):
    def gradient_checkpointing_enable(self, **kwargs):
        self._gradient_checkpointing_func = partial(checkpoint, **kwargs)
"""
ENCODER = """\
import torch

from .base import PreTrained


class Encoder(PreTrained):
    def forward(self, h):
        for layer in self.layers:
            h = self._gradient_checkpointing_func(layer.__call__, h)
        return h
"""


@pytest.mark.parametrize("jobs", ["1", "2"])
def test_checkpoint_held_in_an_attribute_set_in_another_file(tmp_path, capsys, jobs):
    """transformers-style: the base class stores partial(checkpoint) in an attribute, model files
    call it. The run learns the attribute from base.py and translates the calls in encoder.py."""
    (tmp_path / "pkg").mkdir()
    (tmp_path / "pkg" / "base.py").write_text(BASE)
    (tmp_path / "pkg" / "encoder.py").write_text(ENCODER)
    code, out, err = run(capsys, "translate", tmp_path, "--in-place", "-j", jobs)
    assert code == 0, err
    assert "recompute_partial(mindspore.recompute, **kwargs)" in (tmp_path / "pkg" / "base.py").read_text()
    encoder = (tmp_path / "pkg" / "encoder.py").read_text()
    assert "h = self._gradient_checkpointing_func(layer, h)" in encoder
    assert "encoder.py:9:17: RC100 [converted]" in err


def test_held_checkpoint_called_in_a_file_that_never_says_checkpoint(tmp_path, capsys):
    (tmp_path / "pkg").mkdir()
    (tmp_path / "pkg" / "base.py").write_text(BASE.replace("_gradient_checkpointing_func", "ckpt_fn"))
    (tmp_path / "pkg" / "encoder.py").write_text(ENCODER.replace("_gradient_checkpointing_func", "ckpt_fn"))
    code, out, err = run(capsys, "translate", tmp_path, "--in-place")
    assert code == 0, err
    assert "recompute_partial(mindspore.recompute, **kwargs)" in (tmp_path / "pkg" / "base.py").read_text()
    # left as it was, encoder.py would call mindspore.recompute(layer.__call__, h): a TypeError at run time
    assert "h = self.ckpt_fn(layer, h)" in (tmp_path / "pkg" / "encoder.py").read_text()


def test_empty_folder_and_a_file_that_is_not_python(tmp_path, capsys):
    code, _, err = run(capsys, "translate", tmp_path)
    assert code == 0
    assert "no Python files found" in err
    (tmp_path / "notes.txt").write_text("checkpoint\n")
    code, _, err = run(capsys, "translate", tmp_path / "notes.txt", "--in-place")
    assert code == 0
    assert f"{tmp_path / 'notes.txt'}: not a .py or .ipynb file — skipped" in err


def test_output_that_is_a_file_is_refused(tmp_path, capsys):
    (tmp_path / "m.py").write_text(MODEL)
    (tmp_path / "out").write_text("")
    code, _, err = run(capsys, "translate", tmp_path / "m.py", "-o", tmp_path / "out")
    assert code == 2
    assert "is not a folder" in err


def test_output_that_would_overwrite_an_input_is_refused(tmp_path, capsys):
    (tmp_path / "src").mkdir()
    (tmp_path / "src" / "m.py").write_text(MODEL)
    code, _, err = run(capsys, "translate", tmp_path / "src" / "m.py", "-o", tmp_path / "src")
    assert code == 2
    assert "would overwrite this input file" in err
    assert (tmp_path / "src" / "m.py").read_text() == MODEL


def test_progress_bar_only_on_a_terminal(tmp_path):
    import io

    class Tty(io.StringIO):
        def isatty(self):
            return True

    (tmp_path / "m.py").write_text(MODEL)
    tty, out = Tty(), io.StringIO()
    report = engine.run(engine.Options([str(tmp_path)], check=True), stdout=out, stderr=tty)
    assert report.exit_code == 1
    assert "RC100" in tty.getvalue() and "1 file scanned" in tty.getvalue()
    assert "file/s" not in tty.getvalue(), "a run shorter than a second shows no bar"


# --- bad input -------------------------------------------------------------------------------


def bad_tree(root: Path) -> Path:
    root.mkdir()
    (root / "good.py").write_text(MODEL)
    (root / "syntax.py").write_text("from torch.utils.checkpoint import checkpoint\ndef f(:\n    pass\n")
    (root / "py2.py").write_text('from torch.utils.checkpoint import checkpoint\nprint "x"\n')
    (root / "latin1.py").write_bytes(b"from torch.utils.checkpoint import checkpoint\ns = '\xe9t\xe9'\n")
    (root / "dangling.py").symlink_to(root / "gone.py")
    age(root)
    return root


BAD = {
    "syntax.py": "does not parse",
    "py2.py": "Python 3",
    "latin1.py": "UTF-8",
    "dangling.py": "dangling symbolic link",
}


@pytest.mark.parametrize("mode", [[], ["--diff"], ["--check"], ["--in-place"], ["-o", "OUT"]])
def test_bad_files_are_named_and_the_rest_is_processed(tmp_path, capsys, mode):
    tree = bad_tree(tmp_path / "src")
    dest = tmp_path / "out"
    mode = [str(dest) if m == "OUT" else m for m in mode]
    before = snapshot(tree)
    code, out, err = run(capsys, "translate", tree, *mode, tmp_path / "missing.py")
    assert code == 2
    assert f"recompat: error: {tmp_path / 'missing.py'}: no such file or directory" in err
    for name, reason in BAD.items():
        line = next((ln for ln in err.splitlines() if ln.startswith(f"recompat: error: {tree / name}")), None)
        assert line is not None, f"{name} is not reported:\n{err}"
        assert reason in line, line
    assert "5 files scanned, 4 examined, 1 changed, 5 failed" in err
    after = snapshot(tree)
    for name in BAD:
        assert after[name] == before[name], f"{name} must be left as it was"
    good = tree / "good.py"
    if "--in-place" in mode:
        assert_translated(good.read_bytes())
    else:
        assert snapshot(tree) == before
    if "--diff" in mode:
        assert "+++ b/" in out and "good.py" in out
    if "-o" in mode:
        assert sorted(p.name for p in dest.iterdir()) == ["good.py"], "failed files are not written to -o"
        assert_translated((dest / "good.py").read_bytes())
    no_temp_files(tmp_path)


def test_read_only_file_with_in_place(tmp_path, capsys):
    tree = tmp_path / "src"
    tree.mkdir()
    (tree / "a.py").write_text(MODEL)
    (tree / "b.py").write_text(MODEL)
    (tree / "c.py").write_text(MENTIONS)
    (tree / "a.py").chmod(0o444)
    (tree / "c.py").chmod(0o444)   # read-only but nothing to change: not an error
    before = snapshot(tree)
    code, _, err = run(capsys, "translate", tree, "--in-place")
    assert code == 2
    assert f"recompat: error: {tree / 'a.py'}: the file is read-only" in err
    assert "c.py" not in err
    after = snapshot(tree)
    assert after["a.py"] == before["a.py"], "neither changed nor chmod-ed"
    assert after["c.py"] == before["c.py"]
    assert_translated(after["b.py"][0])
    no_temp_files(tree)


@pytest.mark.skipif(hasattr(os, "geteuid") and os.geteuid() == 0, reason="root reads every file")
def test_unreadable_file(tmp_path, capsys):
    (tmp_path / "a.py").write_text(MODEL)
    (tmp_path / "b.py").write_text(MODEL)
    (tmp_path / "a.py").chmod(0)
    try:
        code, _, err = run(capsys, "translate", tmp_path, "--check")
    finally:
        (tmp_path / "a.py").chmod(0o644)
    assert code == 2
    assert f"{tmp_path / 'a.py'}: cannot read it (permission denied)" in err
    assert "1 file would change" in err


def test_unreadable_file_simulated(tmp_path, capsys, monkeypatch):
    """The same as above for any user (root reads everything): reading a.py is refused."""
    (tmp_path / "a.py").write_text(MODEL)
    (tmp_path / "b.py").write_text(MODEL)
    real_open = open

    def fake_open(path, *args, **kw):
        if str(path).endswith("a.py"):
            raise PermissionError(13, "Permission denied", str(path))
        return real_open(path, *args, **kw)

    monkeypatch.setattr(engine, "open", fake_open, raising=False)
    code, _, err = run(capsys, "translate", tmp_path, "--in-place")
    assert code == 2
    assert f"recompat: error: {tmp_path / 'a.py'}: cannot read it (permission denied)" in err
    assert_translated((tmp_path / "b.py").read_bytes())
    assert (tmp_path / "a.py").read_text() == MODEL


def test_dangling_symlink_given_as_path(tmp_path, capsys):
    (tmp_path / "link.py").symlink_to(tmp_path / "nowhere.py")
    (tmp_path / "ok.py").write_text(MODEL)
    code, _, err = run(capsys, "translate", tmp_path / "link.py", tmp_path / "ok.py", "--check")
    assert code == 2
    assert f"recompat: error: {tmp_path / 'link.py'}: dangling symbolic link" in err
    assert "1 file would change" in err


def test_a_failed_write_leaves_the_file_whole(tmp_path, capsys, monkeypatch):
    """A crash between writing the temporary file and the rename: the original stays, no debris."""
    (tmp_path / "a.py").write_text(MODEL)
    (tmp_path / "b.py").write_text(MODEL)
    real_replace = os.replace

    def failing_replace(src, dst):
        if str(dst).endswith("a.py"):
            raise OSError(28, "No space left on device")
        return real_replace(src, dst)

    monkeypatch.setattr(engine.os, "replace", failing_replace)
    code, _, err = run(capsys, "translate", tmp_path, "--in-place")
    assert code == 2
    assert f"recompat: error: {tmp_path / 'a.py'}: cannot write it (No space left on device)" in err
    assert (tmp_path / "a.py").read_text() == MODEL
    assert_translated((tmp_path / "b.py").read_bytes())
    assert sorted(p.name for p in tmp_path.iterdir()) == ["a.py", "b.py"]


# --- encodings and line endings (these depend on the core preserving them) --------------------


def test_bom_and_crlf_round_trip(tmp_path, capsys):
    (tmp_path / "bom.py").write_bytes(b"\xef\xbb\xbf" + MODEL.encode())
    (tmp_path / "crlf.py").write_bytes(MODEL.replace("\n", "\r\n").encode())
    (tmp_path / "coding.py").write_bytes(b"# -*- coding: latin-1 -*-\n" + MODEL.encode() + b"s = '\xe9'\n")
    code, _, err = run(capsys, "translate", tmp_path, "--in-place")
    assert code == 0, err
    bom = (tmp_path / "bom.py").read_bytes()
    assert bom.startswith(b"\xef\xbb\xbf") and not bom.startswith(b"\xef\xbb\xbf" * 2), \
        "core: a UTF-8 BOM must be kept, once"
    assert_translated(bom[3:])
    crlf = (tmp_path / "crlf.py").read_bytes()
    assert crlf.count(b"\n") == crlf.count(b"\r\n"), "core: CRLF line endings must stay CRLF, added lines included"
    assert_translated(crlf.replace(b"\r\n", b"\n"))
    latin = (tmp_path / "coding.py").read_bytes()
    assert latin.startswith(b"# -*- coding: latin-1 -*-\n") and latin.endswith(b"s = '\xe9'\n"), \
        "core: the encoding line and the declared encoding must be kept"
    assert_translated(latin.decode("latin-1").encode())
    assert run(capsys, "translate", tmp_path, "--check")[0] == 0, "core: translating the output again changes nothing"


def test_diff_of_a_crlf_file_without_final_newline(tmp_path, capsys):
    (tmp_path / "m.py").write_bytes(MODEL.rstrip("\n").replace("\n", "\r\n").encode())
    code, out, _ = run(capsys, "translate", tmp_path, "--diff")
    assert code == 0
    assert "+        y = mindspore.recompute(self.block, x)\r\n" in out
    assert out.endswith("\\ No newline at end of file\n")


# --- demo --------------------------------------------------------------------------------------


def test_demo_without_examples_is_a_clear_error(tmp_path, capsys, monkeypatch):
    monkeypatch.setattr(cli, "examples_dir", lambda: tmp_path / "examples")
    code, _, err = run(capsys, "demo")
    assert code == 2
    assert "example project is missing" in err


def test_demo_translates_examples(tmp_path, capsys, monkeypatch):
    examples = tmp_path / "examples"
    (examples / "models").mkdir(parents=True)
    (examples / "models" / "net.py").write_text(MODEL)
    (examples / "README.md").write_text("examples\n")
    monkeypatch.setattr(cli, "examples_dir", lambda: examples)
    monkeypatch.chdir(tmp_path)
    dest = tmp_path / "out" / "demo"
    code, out, err = run(capsys, "demo", "-o", dest, "--no-run", "--diff")   # translate and report only
    assert code == 0, err
    assert "+++ b/examples/models/net.py" in out
    assert_translated((dest / "models" / "net.py").read_bytes())
    assert (dest / "README.md").read_text() == "examples\n"
    assert "conversion rate" in err and "conversion rate" in out and "report: out/demo/report.html" in out


@pytest.mark.parametrize("steps", ["-1", "many"])
def test_demo_train_steps_must_be_a_count(tmp_path, capsys, steps):
    with pytest.raises(SystemExit) as exc:
        main(["demo", "-o", str(tmp_path / "demo"), "--train-steps", steps])
    assert exc.value.code == 2
    assert f"--train-steps: {steps!r}: give a number of steps, 0 or more" in capsys.readouterr().err


def test_demo_without_train_py_says_what_to_do(tmp_path, capsys, monkeypatch):
    examples = tmp_path / "examples"
    examples.mkdir()
    (examples / "net.py").write_text(MODEL)
    monkeypatch.setattr(cli, "examples_dir", lambda: examples)
    code, _, err = run(capsys, "demo", "-o", tmp_path / "demo")
    assert code == 2
    assert "train.py: missing" in err and "--no-run" in err


def test_demo_on_the_shipped_examples(tmp_path, capsys):
    before = snapshot(cli.examples_dir())
    code, out, err = run(capsys, "demo", "-o", tmp_path / "demo", "--no-run", "--diff")
    assert code == 0, err
    assert "+++ b/" in out and "conversion rate" in err
    assert snapshot(cli.examples_dir()) == before
