"""Bad input to `recompat translate`, as a user meets it: each case exits with a message that names the file (or
the option's value) and says what to do, and nothing is lost: no input overwritten or truncated, no temporary file
left, no half-written output.

tests/test_cli.py already covers: a syntax error, Python 2, latin-1 without a coding line and a dangling symlink in
a tree (every write mode); a missing path; a dangling symlink given as a path; an unreadable file (simulated); a
read-only file with --in-place; -o equal to, inside or a file of the input; a failed rename; BOM and CRLF kept.
This file adds the rest, and runs the command as a user does (a subprocess). Pure text: no torch, no MindSpore.

Permission cases run for real: as root (who reads and writes everything) the command runs as the unprivileged
user nobody, in a folder that user owns.
"""
from __future__ import annotations

import ast
import os
import shutil
import signal
import stat
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import pytest

from recompat.translator import engine

# The checkpoint site every case feeds the translator.
SRC = """\
import torch
from torch.utils.checkpoint import checkpoint


def f(block, x):
    return checkpoint(block, x, use_reentrant=False)
"""
TRANSLATED_CALL = "mindspore.recompute(block, x"
ENV = {**os.environ, "GLOG_v": "3"}
NOBODY = 65534


def as_user(user) -> list[str]:
    """The command prefix that runs as ``user`` (None: as this process)."""
    if user is None:
        return []
    return ["setpriv", f"--reuid={user}", f"--regid={user}", "--clear-groups"]


def recompat(*args, cwd=None, user=None, timeout=120) -> subprocess.CompletedProcess:
    return subprocess.run([*as_user(user), sys.executable, "-m", "recompat", *map(str, args)], capture_output=True,
                          text=True, cwd=cwd, env=ENV, timeout=timeout)


def error_line(stderr: str, path) -> str:
    """The `recompat: error:` line about ``path``; fails the test when there is none."""
    lines = [ln for ln in stderr.splitlines() if ln.startswith(f"recompat: error: {path}")]
    assert lines, f"no error line names {path}:\n{stderr}"
    return lines[0]


def is_translation(data: bytes) -> bool:
    text = data.decode()
    ast.parse(text)
    return TRANSLATED_CALL in text and "torch.utils.checkpoint" not in text


def leftovers(root: Path) -> list[Path]:
    return [p for p in root.rglob("*") if p.name.endswith(".tmp")]


def tree_bytes(root: Path) -> dict[str, bytes]:
    return {str(p.relative_to(root)): p.read_bytes() for p in sorted(root.rglob("*")) if p.is_file()}


# --- per-file problems: named, with what to do; the file as it was; the other files done --------------------------

BINARY = b"\x89PNG\r\n\x1a\n\x00\x00\x00\rIHDR" + bytes(range(256)) + b" checkpoint torch.utils.checkpoint\n"

# name -> (bytes, what the error line must say). Each one mentions checkpoint, so it is not passed over unread.
BAD_FILES = {
    "syntax.py": (b"from torch.utils.checkpoint import checkpoint\ndef f(:\n    pass\n",
                  ["syntax.py:2:", "does not parse", "fix it, or --exclude"]),
    "latin1_no_cookie.py": (SRC.encode() + b"s = '\xe9t\xe9'\n",
                            ["latin1_no_cookie.py:7:", "not valid utf-8", "declare its encoding"]),
    "nul.py": (SRC.encode() + b"x = 1\x00\n", ["nul.py:7:", "NUL byte", "--exclude it"]),
    "binary.py": (BINARY, ["binary.py:3:", "NUL byte", "--exclude it"]),
    "unknown_coding.py": (b"# -*- coding: klingon -*-\n" + SRC.encode(), ["unknown encoding: klingon"]),
    "bom_and_latin1_cookie.py": (b"\xef\xbb\xbf# -*- coding: latin-1 -*-\n" + SRC.encode(),
                                 ["byte-order mark", "remove the coding line or the byte-order mark"]),
}


def bad_tree(root: Path) -> Path:
    root.mkdir()
    (root / "good.py").write_text(SRC)
    for name, (data, _) in BAD_FILES.items():
        (root / name).write_bytes(data)
    (root / "loop_a.py").symlink_to("loop_b.py")
    (root / "loop_b.py").symlink_to("loop_a.py")
    return root


@pytest.mark.parametrize("mode", [["--check"], ["--in-place"], ["-o", "OUT"]], ids=["check", "in-place", "output"])
def test_each_bad_file_is_named_with_what_to_do_and_left_as_it_was(tmp_path, mode):
    tree = bad_tree(tmp_path / "src")
    out = tmp_path / "out"
    mode = [str(out) if m == "OUT" else m for m in mode]
    before = tree_bytes(tree)
    r = recompat("translate", tree, *mode)
    assert r.returncode == 2, r.stderr
    for name, (_, says) in BAD_FILES.items():
        line = error_line(r.stderr, tree / name)
        for words in says:
            assert words in line, line
    for name in ("loop_a.py", "loop_b.py"):
        line = error_line(r.stderr, tree / name)
        assert "symbolic link loop" in line and "fix or remove the link" in line, line
        assert "does not exist" not in line, "a loop is not a missing target"
    after = tree_bytes(tree)
    for name in BAD_FILES:
        assert after[name] == before[name], f"{name} must be left byte for byte"
    assert os.readlink(tree / "loop_a.py") == "loop_b.py"
    if "--in-place" in mode:
        assert is_translation(after["good.py"])
    else:
        assert after == before
    if "-o" in mode:
        assert sorted(p.name for p in out.iterdir()) == ["good.py"], "a file that failed is not written to -o"
        assert is_translation((out / "good.py").read_bytes())
    assert leftovers(tmp_path) == []


def test_a_symlink_loop_given_as_the_path(tmp_path):
    (tmp_path / "a.py").symlink_to("b.py")
    (tmp_path / "b.py").symlink_to("a.py")
    r = recompat("translate", tmp_path / "a.py", "--check")
    assert r.returncode == 2
    line = error_line(r.stderr, tmp_path / "a.py")
    assert "symbolic link loop" in line and "fix or remove the link" in line, line


def test_a_symlinked_folder_in_a_tree_is_named_not_skipped_silently(tmp_path):
    (tmp_path / "real").mkdir()
    (tmp_path / "real" / "model.py").write_text(SRC)
    tree = tmp_path / "tree"
    tree.mkdir()
    (tree / "linked").symlink_to(tmp_path / "real")
    r = recompat("translate", tree, "--check")
    assert r.returncode == 0, r.stderr
    warning = next(line for line in r.stderr.splitlines() if "linked" in line)
    assert "symlinked folder, not followed" in warning and "pass it as a path" in warning, warning
    r = recompat("translate", tree / "linked", "--check")   # as the message says
    assert r.returncode == 1 and "1 changed" in r.stderr, r.stderr


# --- encodings, line endings, odd but valid files: translated, the rest byte for byte ----------------------------

def test_latin1_with_a_coding_line_keeps_its_encoding_byte_for_byte(tmp_path):
    """The same text declared latin-1 and declared UTF-8 translates to the same text: only the edits differ from
    the input, and the latin-1 file stays latin-1 (é is one byte, 0xe9, on the edited line too)."""
    text = ('"""Modèle: é, ü, ß."""\n' + SRC.replace("use_reentrant=False)", "use_reentrant=False)  # café")
            + "NAME = 'señal'\n")
    (tmp_path / "latin.py").write_bytes(("# -*- coding: latin-1 -*-\n" + text).encode("latin-1"))
    (tmp_path / "utf8.py").write_bytes(("# -*- coding: utf-8 -*-\n" + text).encode("utf-8"))
    r = recompat("translate", tmp_path, "--in-place")
    assert r.returncode == 0, r.stderr
    latin, utf8 = (tmp_path / "latin.py").read_bytes(), (tmp_path / "utf8.py").read_bytes()
    assert b"\xc3" not in latin, "re-encoded as UTF-8"
    assert latin.decode("latin-1").replace("latin-1", "utf-8", 1) == utf8.decode("utf-8")
    assert is_translation(utf8)
    for line in text.encode("latin-1").splitlines(keepends=True):
        if b"checkpoint" not in line:
            assert line in latin, f"{line!r} changed"
    assert b"  # caf\xe9\n" in latin


def test_tabs_crlf_and_a_bom_together(tmp_path):
    data = b"\xef\xbb\xbf" + SRC.replace("    ", "\t").replace("\n", "\r\n").encode()
    (tmp_path / "m.py").write_bytes(data)
    r = recompat("translate", tmp_path, "--in-place")
    assert r.returncode == 0, r.stderr
    new = (tmp_path / "m.py").read_bytes()
    assert new.startswith(b"\xef\xbb\xbf") and not new.startswith(b"\xef\xbb\xbf" * 2)
    assert new.count(b"\n") == new.count(b"\r\n"), "every line ends in CRLF, added ones too"
    assert b"\treturn mindspore.recompute(block, x" in new, "the tab indentation is kept"
    assert is_translation(new[3:].replace(b"\r\n", b"\n"))
    assert recompat("translate", tmp_path, "--check").returncode == 0, "translating again changes nothing"


def test_empty_files_and_a_bom_alone(tmp_path):
    src = tmp_path / "src"
    src.mkdir()
    (src / "empty.py").write_bytes(b"")
    (src / "bom.py").write_bytes(b"\xef\xbb\xbf")
    (src / "ok.py").write_text(SRC)
    r = recompat("translate", src, "-o", tmp_path / "out")
    assert r.returncode == 0, r.stderr
    assert (tmp_path / "out" / "empty.py").read_bytes() == b""
    assert (tmp_path / "out" / "bom.py").read_bytes() == b"\xef\xbb\xbf"
    r = recompat("translate", src, "--in-place")
    assert r.returncode == 0, r.stderr
    assert (src / "empty.py").read_bytes() == b"" and (src / "bom.py").read_bytes() == b"\xef\xbb\xbf"


def test_a_folder_named_like_a_python_file_is_a_folder(tmp_path):
    src = tmp_path / "src"
    (src / "pkg.py").mkdir(parents=True)
    (src / "pkg.py" / "inner.py").write_text(SRC)
    r = recompat("translate", src, "-o", tmp_path / "out")
    assert r.returncode == 0, r.stderr
    assert is_translation((tmp_path / "out" / "pkg.py" / "inner.py").read_bytes())
    r = recompat("translate", src / "pkg.py", "--check")
    assert r.returncode == 1 and "would change" in r.stderr, r.stderr


def test_a_5_mb_file_with_20000_sites(tmp_path):
    """Throughput, not a limit: the time is printed (pytest -s), never asserted."""
    head = "import torch\nfrom torch.utils.checkpoint import checkpoint\n\n\n"
    pad = "# " + "x" * 170 + "\n"
    body = "".join(f"def f{i}(block, x):\n    {pad}    return checkpoint(block, x, use_reentrant=False)\n\n\n"
                   for i in range(20_000))
    (tmp_path / "big.py").write_text(head + body)
    size = (tmp_path / "big.py").stat().st_size
    assert size > 5_000_000
    start = time.perf_counter()
    r = recompat("translate", tmp_path / "big.py", "-o", tmp_path / "out", "-q", timeout=600)
    seconds = time.perf_counter() - start
    print(f"\n{size / 1e6:.1f} MB, 20,000 checkpoint sites: translated and written in {seconds:.1f} s")
    assert r.returncode == 0, r.stderr
    assert "20000 sites: 20000 converted" in r.stderr, r.stderr
    out = (tmp_path / "out" / "big.py").read_text()
    assert out.count("mindspore.recompute(block, x") == 20_000
    ast.parse(out)


# --- permissions: real ones (as root, the command runs as nobody) ------------------------------------------------

@pytest.fixture
def unprivileged(tmp_path):
    """(a folder the command's user owns, the user to run it as: None for this one; nobody when this is root)."""
    if os.geteuid() != 0:
        yield tmp_path, None
        return
    try:
        probe = subprocess.run([*as_user(NOBODY), sys.executable, "-c", "import recompat.cli"], capture_output=True,
                               cwd="/").returncode
    except OSError:
        probe = None
    if probe != 0:
        pytest.skip("running as root, and cannot run recompat as the user nobody here (setpriv)")
    folder = Path(tempfile.mkdtemp(prefix="recompat-nobody-"))
    folder.chmod(0o755)
    os.chown(folder, NOBODY, NOBODY)
    try:
        yield folder, NOBODY
    finally:
        for p in [folder, *folder.rglob("*")]:
            if not p.is_symlink():
                p.chmod(0o755)
        shutil.rmtree(folder)


def own(root: Path, user) -> None:
    if user is not None:
        for p in [root, *root.rglob("*")]:
            os.chown(p, user, user, follow_symlinks=False)


def test_an_unreadable_file_for_real(unprivileged):
    folder, user = unprivileged
    src = folder / "src"
    src.mkdir()
    (src / "secret.py").write_text(SRC)
    (src / "ok.py").write_text(SRC)
    own(folder, user)
    (src / "secret.py").chmod(0)
    r = recompat("translate", src, "-o", folder / "out", cwd=folder, user=user)
    assert r.returncode == 2, r.stderr
    line = error_line(r.stderr, src / "secret.py")
    assert "cannot read it (permission denied)" in line and "chmod u+r" in line, line
    assert sorted(p.name for p in (folder / "out").iterdir()) == ["ok.py"]
    assert stat.S_IMODE((src / "secret.py").stat().st_mode) == 0, "its permissions are left alone"


def test_a_read_only_output_folder_is_refused_before_anything_is_done(unprivileged):
    folder, user = unprivileged
    src = folder / "src"
    src.mkdir()
    (src / "a.py").write_text(SRC)
    (src / "notes.txt").write_text("notes\n")
    (folder / "ro").mkdir()
    own(folder, user)
    (folder / "ro").chmod(0o555)
    for dest in (folder / "ro", folder / "ro" / "new" / "deeper"):
        r = recompat("translate", src, "-o", dest, cwd=folder, user=user)
        assert r.returncode == 2, r.stderr
        assert f"recompat: error: -o {dest}: cannot write into {folder / 'ro'} (permission denied)" in r.stderr
        assert "make it writable, or name another folder" in r.stderr
        assert r.stderr.count("recompat: error:") == 1, "one message, not one per file"
    assert list((folder / "ro").iterdir()) == []
    assert (src / "a.py").read_text() == SRC


# --- --in-place runs side by side, edits meanwhile, and Ctrl-C ---------------------------------------------------

def make_tree(root: Path, files: int, pad_lines: int = 0) -> Path:
    pad = ("# " + "y" * 100 + "\n") * pad_lines
    for i in range(files):
        p = root / f"d{i % 10}" / f"m{i}.py"
        p.parent.mkdir(parents=True, exist_ok=True)
        p.write_text(SRC + pad)
    return root


def test_two_in_place_runs_at_once_on_one_tree(tmp_path):
    tree = make_tree(tmp_path / "src", 200)
    logs = [tmp_path / "first.log", tmp_path / "second.log"]
    procs = [subprocess.Popen([sys.executable, "-m", "recompat", "translate", tree, "--in-place", "-q"],
                              stdout=subprocess.DEVNULL, stderr=log.open("w"), env=ENV) for log in logs]
    codes = [p.wait(timeout=120) for p in procs]
    assert codes == [0, 0], [log.read_text() for log in logs]
    for p in tree.rglob("*.py"):
        assert is_translation(p.read_bytes()), p
    assert leftovers(tree) == []
    assert recompat("translate", tree, "--check").returncode == 0


def test_a_file_edited_while_it_is_translated_is_not_overwritten(tmp_path, monkeypatch, capsys):
    """The user saves a.py after recompat read it: the rewrite of the old text would drop that edit."""
    (tmp_path / "a.py").write_text(SRC)
    (tmp_path / "b.py").write_text(SRC)
    edited = SRC + "EDITED_MEANWHILE = True\n"
    real = engine.translate_bytes

    def translate_while_the_user_saves(data, path, **kw):
        if path.endswith("a.py"):
            (tmp_path / "a.py").write_text(edited)
        return real(data, path, **kw)

    monkeypatch.setattr(engine, "translate_bytes", translate_while_the_user_saves)
    report = engine.run(engine.Options([str(tmp_path)], in_place=True))
    err = capsys.readouterr().err
    assert report.exit_code == 2
    line = error_line(err, tmp_path / "a.py")
    assert "changed on disk while it was being translated" in line and "run recompat again" in line, line
    assert (tmp_path / "a.py").read_text() == edited
    assert is_translation((tmp_path / "b.py").read_bytes())
    assert leftovers(tmp_path) == []


def _interrupt_when(proc: subprocess.Popen, started, group: bool, signum=signal.SIGINT) -> None:
    deadline = time.monotonic() + 60
    while proc.poll() is None and not started() and time.monotonic() < deadline:
        time.sleep(0.0005)
    if proc.poll() is None:
        if group:   # as Ctrl-C in a terminal: the worker processes get it too
            os.killpg(proc.pid, signum)
        else:
            proc.send_signal(signum)
    proc.wait(timeout=60)


@pytest.mark.parametrize("signum", [signal.SIGINT, signal.SIGTERM], ids=["ctrl-c", "sigterm"])
@pytest.mark.parametrize("mode", ["output", "in-place"])
def test_ctrl_c_while_writing_leaves_whole_files_only(tmp_path, mode, signum):
    """SIGINT (Ctrl-C, to the whole process group) or SIGTERM (`kill`, to the command only) as soon as the first
    file is being written (a temporary file appears, or an input is rewritten): afterwards no temporary file
    anywhere, every output file absent or a complete translation, and every input the original or the complete
    translation. Three tries: the bad moment is a narrow one."""
    src = make_tree(tmp_path / "src", 300, pad_lines=100)
    original = tree_bytes(src)
    PAST = 1_000_000_000
    for attempt in range(3):
        out = tmp_path / f"out{attempt}"
        if mode == "output":
            args = ["-o", out, "-j", "1"]

            def started():
                return out.is_dir() and any(files for _, _, files in os.walk(out))
        else:
            for p in src.rglob("*.py"):
                p.write_bytes(original[str(p.relative_to(src))])
                os.utime(p, (PAST, PAST))
            args = ["--in-place", "-j", "2"]

            def started():
                return any(f.name.endswith(".tmp") or f.stat().st_mtime != PAST for f in src.rglob("*.py*"))
        log = tmp_path / f"log{attempt}"
        proc = subprocess.Popen([sys.executable, "-m", "recompat", "translate", src, "-q", *args],
                                stdout=subprocess.DEVNULL, stderr=log.open("w"), env=ENV, start_new_session=True)
        _interrupt_when(proc, started, group=mode == "in-place" and signum == signal.SIGINT, signum=signum)
        err = log.read_text()
        assert proc.returncode in (0, 128 + signum), err
        if proc.returncode == 128 + signum:
            assert "interrupted; files already written are complete, the rest untouched" in err
            assert "Traceback" not in err, err
        assert leftovers(tmp_path) == [], f"attempt {attempt}: temporary files left"
        if mode == "output":
            for p in out.rglob("*") if out.exists() else ():
                if p.is_file():
                    assert is_translation(p.read_bytes()), f"{p} is not a whole translation"
            assert tree_bytes(src) == original, "-o never changes the input"
        else:
            for rel, data in tree_bytes(src).items():
                assert data == original[rel] or is_translation(data), f"{rel} is neither the input nor its translation"
