"""No silent miss on real trees: training code nobody here wrote, translated to MindSpore.

The sources of DeepSpeed, Megatron-core, torchtune and Lightning Fabric are downloaded as data (never installed)
into a temporary folder with the package client, and translated with `recompat translate -o`. Then, counted by an
independent scan of the output (tests/checkpoint_refs.py, not the translator's report): every reference to a
checkpoint API of torch or of a third-party library that is left has a `# recompat:` note on its statement, and
a diagnostic in the JSON report on that line of the user's file; every output parses, translating it again
changes nothing, and no import that the code still uses is removed. Skipped, with the reason, when the package
registry cannot be reached.
"""
from __future__ import annotations

import ast
import json
import subprocess
import sys
import zipfile
import tarfile
from pathlib import Path

import pytest

from checkpoint_refs import CHECKPOINT_APIS, scan_file, scan_tree

# (requirement, pip options, the package folder inside the download)
TREES = {
    "deepspeed": ("deepspeed==0.19.8", [], "deepspeed-0.19.8/deepspeed"),
    "megatron": ("megatron-core==0.19.2", ["--only-binary=:all:", "--python-version", "3.12"], "megatron"),
    "torchtune": ("torchtune==0.6.1", [], "torchtune"),
    "lightning_fabric": ("lightning-fabric==2.6.6", [], "lightning_fabric"),
}


def _download(name: str, folder: Path) -> Path:
    requirement, options, inside = TREES[name]
    dl = folder / "dl"
    proc = subprocess.run([sys.executable, "-m", "pip", "download", "-q", "--no-deps", "-d", str(dl), *options,
                           requirement], capture_output=True, text=True, timeout=300)
    if proc.returncode != 0:
        pytest.skip(f"the package registry could not be reached for {requirement}: "
                    f"{proc.stderr.strip().splitlines()[-1] if proc.stderr.strip() else proc.returncode}")
    (archive,) = list(dl.iterdir())
    src = folder / "src"
    if archive.name.endswith(".whl"):
        zipfile.ZipFile(archive).extractall(src)
    else:
        with tarfile.open(archive) as tar:
            tar.extractall(src, filter="data")
    return src / inside


@pytest.fixture(scope="module", params=sorted(TREES))
def swept(request, tmp_path_factory):
    """(the tree, its translation, the JSON report) for one library."""
    folder = tmp_path_factory.mktemp(request.param)
    tree = _download(request.param, folder)
    out = folder / "out" / tree.name
    report = folder / "report.json"
    proc = subprocess.run([sys.executable, "-m", "recompat", "translate", str(tree), "-o", str(out), "-q", "-j", "2",
                           "--json", str(report)], capture_output=True, text=True, timeout=900)
    assert proc.returncode in (0, 1), proc.stderr[-3000:]
    return tree, out, json.loads(report.read_text())


def test_every_checkpoint_reference_left_is_reported(swept):
    tree, out, report = swept
    refs = scan_tree(out)
    silent = [r for r in refs if not r.reported]
    assert not silent, "references left with no `# recompat:` note:\n" + "\n".join(
        f"  {r.path}:{r.line}: {r.name}" for r in silent)
    # each note is a diagnostic of the translator's for that file (not a comment the library had)
    codes = {Path(f["path"]).resolve().relative_to(tree.resolve()).as_posix():
             {d["code"] for s in f["sites"] for d in s["diagnostics"]} for f in report["files"]}
    for r in refs:
        noted = {n.split()[2] for n in r.notes}
        assert noted <= codes.get(Path(r.path).as_posix(), set()), f"{r.path}:{r.line}: {r.notes} not in the report"


def test_the_outputs_parse_and_translating_them_again_changes_nothing(swept):
    _, out, report = swept
    assert report["summary"]["files_failed"] == 0 if "files_failed" in report["summary"] else True
    changed = [f["path"] for f in report["files"] if f.get("changed")]
    for path in out.rglob("*.py"):
        ast.parse(path.read_bytes(), filename=str(path))
    proc = subprocess.run([sys.executable, "-m", "recompat", "translate", str(out), "--check", "-q"],
                          capture_output=True, text=True, timeout=900)
    assert proc.returncode == 0, f"translating the output again changes it ({len(changed)} files translated):\n" \
                                 + proc.stdout[-3000:] + proc.stderr[-3000:]


def _used_names(tree: ast.Module) -> set[str]:
    """Names read anywhere, string annotations and `__all__` entries included."""
    used = {n.id for n in ast.walk(tree) if isinstance(n, ast.Name)}
    for node in ast.walk(tree):
        if isinstance(node, ast.Constant) and isinstance(node.value, str) and node.value.isidentifier():
            used.add(node.value)
        elif isinstance(node, ast.Constant) and isinstance(node.value, str):
            try:
                used |= {n.id for n in ast.walk(ast.parse(node.value, mode="eval")) if isinstance(n, ast.Name)}
            except (SyntaxError, ValueError):
                pass
    return used


def _bound(tree: ast.Module) -> set[str]:
    out = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            out |= {a.asname or a.name.split(".")[0] for a in node.names}
        elif isinstance(node, ast.ImportFrom):
            out |= {a.asname or a.name for a in node.names}
    return out


def test_no_import_the_code_still_uses_is_removed(swept):
    tree, out, report = swept
    for f in report["files"]:
        if not f.get("changed"):
            continue
        before = ast.parse(Path(f["path"]).read_bytes())
        after = ast.parse((out / Path(f["path"]).resolve().relative_to(tree.resolve())).read_bytes())
        removed = _bound(before) - _bound(after)
        still_used = removed & _used_names(after)
        assert not still_used, f"{f['path']}: imports removed although the code still uses {sorted(still_used)}"


def _defined_signature(package: Path, api: str) -> ast.arguments | None:
    """The parameters of the function `api` names, read from the downloaded sources of its library."""
    parts = api.split(".")
    folder = package.parent.joinpath(*parts[:-1])
    for path in (folder.with_suffix(".py"), folder / "__init__.py"):
        if path.is_file():
            for node in ast.parse(path.read_bytes()).body:
                if isinstance(node, ast.FunctionDef) and node.name == parts[-1]:
                    return node.args
    return None


def _shape(args: ast.arguments) -> list[str]:
    return [*(a.arg for a in args.posonlyargs + args.args), f"*{args.vararg.arg}" if args.vararg else "",
            *(a.arg for a in args.kwonlyargs), f"**{args.kwarg.arg}" if args.kwarg else ""]


def test_third_party_entries_record_the_librarys_own_signature(swept):
    """A mappings entry for a third-party API (`library:`) records the parameters its library defines; the
    drift test cannot see them (the library is not installed), so they are read from the downloaded sources."""
    from recompat import mappings

    tree, _, _ = swept
    checked = 0
    for entry in mappings.default().entries:
        if not entry.torch.get("library") or entry.torch["api"].split(".")[0] != tree.name:
            continue
        recorded = _shape(mappings.signature_arguments(entry.torch["signature"]))
        for api in entry.names("torch"):
            found = _defined_signature(tree, api)
            if found is not None:
                assert _shape(found) == recorded, f"{entry.id}: {api} is defined as {_shape(found)}"
                checked += 1
    entries = [e for e in mappings.default().entries if e.torch.get("library")
               and e.torch["api"].split(".")[0] == tree.name]
    assert checked >= len(entries), f"the definitions of {[e.id for e in entries]} were not all found in {tree}"


# -- the oracle itself can fail ------------------------------------------------------------------------------

def test_the_scan_finds_references_in_any_position_relative_imports_included(tmp_path):
    pipe = tmp_path / "deepspeed" / "runtime" / "pipe"
    pipe.mkdir(parents=True)
    for folder in (pipe, pipe.parent, pipe.parent.parent):
        (folder / "__init__.py").write_text("")
    (pipe / "module.py").write_text(
        "from ..activation_checkpointing import checkpointing\n"
        "from torch.utils.checkpoint import CheckpointPolicy as P\n"
        "def f(fn=checkpointing.checkpoint):\n"
        "    # recompat: RC160 reported\n"
        "    return P.MUST_SAVE\n")
    refs = scan_tree(tmp_path / "deepspeed")
    assert [(r.line, r.name, r.reported) for r in refs] == [
        (1, "deepspeed.runtime.activation_checkpointing.checkpointing", False),
        (2, "torch.utils.checkpoint.CheckpointPolicy", False),
        (3, "deepspeed.runtime.activation_checkpointing.checkpointing.checkpoint", False),
        (5, "torch.utils.checkpoint.CheckpointPolicy.MUST_SAVE", True)]
    assert "deepspeed.checkpointing" in CHECKPOINT_APIS


POLICY = """\
import torch
from torch.utils.checkpoint import checkpoint, SAC_IGNORED_OPS


def policy(ctx, op, *args, **kwargs):
    return op not in SAC_IGNORED_OPS


def f(block, x):
    return checkpoint(block, x, use_reentrant=False)
"""


def test_a_name_missing_from_the_data_is_caught_by_the_scan(tmp_path):
    """Planted bug: the translator without reported.yaml's names leaves SAC_IGNORED_OPS unmarked."""
    import dataclasses

    from recompat import mappings
    from recompat.translator.translate import translate_bytes

    full = mappings.default()
    for maps, silent in ((full, 0), (dataclasses.replace(full, reported=()), 2)):
        path = tmp_path / f"silent{silent}.py"
        path.write_bytes(translate_bytes(POLICY.encode(), str(path), mappings=maps).new_data)
        refs = scan_file(path, tmp_path)
        assert len([r for r in refs if not r.reported]) == silent, refs
