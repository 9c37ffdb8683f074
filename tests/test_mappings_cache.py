"""The mappings cache (recompat.mappings.load): a load that passed is kept in the user's cache folder under a hash of
everything load() read, and the next process unpickles it. A hit must give what parsing gives; anything stale,
corrupt, foreign or unwritable must be ignored (and rebuilt), never an error and never a wrong answer.

Every test here points the cache at its own tmp folder (RECOMPAT_CACHE_DIR) and loads a copy of the shipped
mappings folder, so nothing is written to the real home nor to the package folder.
"""
from __future__ import annotations

import dataclasses
import os
import pickle
import shutil
from pathlib import Path

import pytest
import yaml

from recompat import mappings
from recompat.mappings import MappingError

MAPPINGS = Path(mappings.__file__).parent
FIELDS = [f.name for f in dataclasses.fields(mappings.Mappings)]


@pytest.fixture(autouse=True)
def cache(tmp_path, monkeypatch) -> Path:
    """This test's cache folder (not created: load() creates it)."""
    folder = tmp_path / "cache"
    monkeypatch.setenv("RECOMPAT_CACHE_DIR", str(folder))
    monkeypatch.delenv("RECOMPAT_NO_CACHE", raising=False)
    return folder


@pytest.fixture
def folder(tmp_path) -> Path:
    """A copy of the shipped mappings folder: the YAML files and the examples (their output.txt sets `proven`)."""
    dest = tmp_path / "mappings"
    dest.mkdir()
    for path in MAPPINGS.glob("*.yaml"):
        shutil.copy(path, dest / path.name)
    shutil.copytree(MAPPINGS / "examples", dest / "examples")
    return dest


@pytest.fixture
def parses(monkeypatch) -> list:
    """The folders load() parsed (a cache miss each); a hit parses nothing."""
    seen, real = [], mappings._load

    def counting(folder, texts):
        seen.append(folder)
        return real(folder, texts)

    monkeypatch.setattr(mappings, "_load", counting)
    return seen


def _same(a: mappings.Mappings, b: mappings.Mappings) -> None:
    """Mappings compares by identity (eq=False); compare every field."""
    for name in FIELDS:
        assert getattr(a, name) == getattr(b, name), name


def _uncached(folder: Path, monkeypatch) -> mappings.Mappings:
    with monkeypatch.context() as m:
        m.setenv("RECOMPAT_NO_CACHE", "1")
        return mappings.load(folder)


def _cache_files(cache: Path) -> list[Path]:
    return sorted(cache.glob("mappings-*.pickle")) if cache.is_dir() else []


def _edit(path: Path, change) -> None:
    data = yaml.safe_load(path.read_text(encoding="utf-8"))
    change(data)
    path.write_text(yaml.safe_dump(data, allow_unicode=True, sort_keys=False), encoding="utf-8")


# -- hits and misses ------------------------------------------------------------------------------------------------

def test_a_cache_hit_gives_the_same_mappings_without_parsing(folder, cache, parses, monkeypatch):
    first = mappings.load(folder)
    assert parses == [folder] and len(_cache_files(cache)) == 1
    second = mappings.load(folder)
    assert parses == [folder], "the second load parsed again: no cache hit"
    assert second is not first
    _same(second, first)
    _same(second, _uncached(folder, monkeypatch))
    # the derived indexes work on an unpickled Mappings too
    assert second.by_torch_name.keys() == first.by_torch_name.keys()
    assert second.model_scope["torch"].keys() == first.model_scope["torch"].keys()
    assert any(e.proven for e in second.entries) and not all(e.proven for e in second.entries)


def test_the_shipped_folder_hits_too(cache, parses):
    """default()'s folder: the cache file goes to the cache folder, never into the package."""
    _same(mappings.load(), mappings.load())
    assert len(parses) == 1 and len(_cache_files(cache)) == 1
    assert not list(MAPPINGS.rglob("*.pickle"))


def test_changing_a_yaml_file_invalidates_the_cache(folder, parses):
    before = mappings.load(folder)
    _edit(folder / "diagnostics.yaml", lambda d: d["diagnostics"]["RC100"].update(message="{source} becomes {target}"))
    after = mappings.load(folder)
    assert len(parses) == 2
    assert before.diagnostics["RC100"]["message"] == "{source} -> {target}"
    assert after.diagnostics["RC100"]["message"] == "{source} becomes {target}"
    mappings.load(folder)
    assert len(parses) == 2   # ... and the new data is cached in turn


def test_a_new_or_removed_yaml_file_invalidates_the_cache(folder, cache, parses):
    mappings.load(folder)
    (folder / "empty.yaml").write_text("# nothing yet\n", encoding="utf-8")
    mappings.load(folder)
    assert len(parses) == 2 and len(_cache_files(cache)) == 2
    (folder / "empty.yaml").unlink()
    mappings.load(folder)                   # the files are the first load's again: its cache file holds them
    assert len(parses) == 2
    shutil.copy(folder / "frameworks.yaml", folder / "more_frameworks.yaml")
    with pytest.raises(MappingError, match="defined twice"):
        mappings.load(folder)


def test_an_example_proven_or_unproven_since_is_seen(folder, parses):
    """Entry.proven comes from examples/<id>/output.txt, which is no YAML: the cache must still follow it."""
    assert mappings.load(folder).entry("linear").proven
    output = folder / "examples" / "linear" / "output.txt"
    text = output.read_bytes()
    output.unlink()
    assert not mappings.load(folder).entry("linear").proven
    assert not mappings.load(folder).entry("linear").proven
    output.write_bytes(text)
    assert mappings.load(folder).entry("linear").proven
    assert len(parses) == 3


def test_two_folders_with_the_same_yaml_keep_their_own_proven(folder, tmp_path, parses):
    bare = tmp_path / "bare"            # the same YAML, no examples: nothing proven
    bare.mkdir()
    for path in folder.glob("*.yaml"):
        shutil.copy(path, bare / path.name)
    for _ in range(2):
        assert any(e.proven for e in mappings.load(folder).entries)
        assert not any(e.proven for e in mappings.load(bare).entries)
    assert parses == [folder, bare]


def test_a_load_that_fails_caches_nothing(folder, cache):
    _edit(folder / "diagnostics.yaml", lambda d: d["diagnostics"]["RC100"].update(status="done"))
    for _ in range(2):
        with pytest.raises(MappingError):
            mappings.load(folder)
    assert _cache_files(cache) == []


# -- what is never used -------------------------------------------------------------------------------------------

@pytest.mark.parametrize("damage", ["garbage", "truncated", "empty", "directory"])
def test_a_corrupt_cache_file_is_ignored_and_rebuilt(folder, cache, parses, monkeypatch, damage):
    good = mappings.load(folder)
    (path,) = _cache_files(cache)
    data = path.read_bytes()
    path.unlink()
    if damage == "garbage":
        path.write_bytes(b"\x80\x05not a pickle at all" * 10)
    elif damage == "truncated":
        path.write_bytes(data[: len(data) // 2])
    elif damage == "empty":
        path.write_bytes(b"")
    else:
        path.mkdir()
    os.chmod(path, 0o700 if damage == "directory" else 0o600)
    again = mappings.load(folder)
    _same(again, good)
    assert len(parses) == 2
    if damage != "directory":       # rebuilt: the next load is a hit
        mappings.load(folder)
        assert len(parses) == 2
        assert path.read_bytes() == data


def test_a_planted_stale_cache_is_not_used(folder, cache, parses, monkeypatch):
    """A cache file under the right name whose key inside is another's (or another format's) is not used."""
    good = mappings.load(folder)
    (path,) = _cache_files(cache)
    stale = mappings.Mappings(entries=(), diagnostics={"RC100": {"status": "manual", "message": "stale"}})
    for held in [(mappings.CACHE_FORMAT, "0" * 64, stale),
                 (mappings.CACHE_FORMAT + 1, path.name[len("mappings-"):-len(".pickle")], stale),
                 ("not", "a", "tuple of ours"),
                 stale]:
        path.write_bytes(pickle.dumps(held))
        os.chmod(path, 0o600)
        _same(mappings.load(folder), good)
    assert len(parses) == 5


class _Planted:
    """A pickle that would touch a file when unpickled by a plain pickle.loads."""

    def __init__(self, marker: Path):
        self.marker = marker

    def __reduce__(self):
        return (Path.touch, (self.marker,))


def test_a_cache_file_runs_nothing_when_read(folder, cache, tmp_path, parses):
    """Only the mapping dataclasses are unpickled: a planted file that names any other callable is refused."""
    good = mappings.load(folder)
    (path,) = _cache_files(cache)
    marker = tmp_path / "ran"
    key = path.name[len("mappings-"):-len(".pickle")]
    path.write_bytes(pickle.dumps((mappings.CACHE_FORMAT, key, _Planted(marker))))
    os.chmod(path, 0o600)
    _same(mappings.load(folder), good)
    assert not marker.exists()
    assert len(parses) == 2


@pytest.mark.skipif(not hasattr(os, "getuid"), reason="POSIX permissions")
def test_a_cache_file_others_may_write_is_not_read(folder, cache, parses):
    mappings.load(folder)
    (path,) = _cache_files(cache)
    os.chmod(path, 0o666)
    mappings.load(folder)
    assert len(parses) == 2


# -- where the cache lives, and when there is none ------------------------------------------------------------------

def test_an_unwritable_cache_folder_means_no_cache(folder, tmp_path, monkeypatch, parses):
    blocker = tmp_path / "a-file"
    blocker.write_text("not a folder")
    monkeypatch.setenv("RECOMPAT_CACHE_DIR", str(blocker / "cache"))   # cannot be created, not even by root
    first = mappings.load(folder)
    _same(mappings.load(folder), first)
    assert len(parses) == 2
    assert blocker.read_text() == "not a folder"


@pytest.mark.skipif(not hasattr(os, "getuid") or os.getuid() == 0, reason="root writes into a read-only folder")
def test_a_read_only_cache_folder_means_no_cache(folder, cache, monkeypatch, parses):
    cache.mkdir()
    cache.chmod(0o500)
    try:
        mappings.load(folder)
        mappings.load(folder)
    finally:
        cache.chmod(0o700)
    assert len(parses) == 2 and _cache_files(cache) == []


@pytest.mark.parametrize("value", ["1", "yes"])
def test_recompat_no_cache_turns_it_off(folder, cache, monkeypatch, parses, value):
    mappings.load(folder)                       # a valid cache file exists ...
    monkeypatch.setenv("RECOMPAT_NO_CACHE", value)
    assert mappings.cache_dir() is None
    monkeypatch.setattr(mappings, "_read_cache", lambda *a: pytest.fail("the cache was read"))
    monkeypatch.setattr(mappings, "_write_cache", lambda *a: pytest.fail("the cache was written"))
    mappings.load(folder)                       # ... and is neither read nor written
    assert len(parses) == 2


def test_recompat_no_cache_0_leaves_it_on(monkeypatch, cache):
    monkeypatch.setenv("RECOMPAT_NO_CACHE", "0")
    assert mappings.cache_dir() == cache


def test_the_cache_folder_follows_xdg_then_home(monkeypatch, tmp_path):
    monkeypatch.delenv("RECOMPAT_CACHE_DIR")
    monkeypatch.setenv("HOME", str(tmp_path / "home"))
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "xdg"))
    assert mappings.cache_dir() == tmp_path / "xdg" / "recompat"
    monkeypatch.setenv("XDG_CACHE_HOME", "relative/cache")             # invalid per the XDG spec: ignored
    assert mappings.cache_dir() == tmp_path / "home" / ".cache" / "recompat"
    monkeypatch.delenv("XDG_CACHE_HOME")
    assert mappings.cache_dir() == tmp_path / "home" / ".cache" / "recompat"


def test_old_cache_files_are_pruned(folder, cache, monkeypatch):
    monkeypatch.setattr(mappings, "_CACHE_KEEP", 2)
    for n in range(4):
        _edit(folder / "diagnostics.yaml", lambda d: d["diagnostics"]["RC100"].update(message=f"{{source}} {n}"))
        mappings.load(folder)
        assert len(_cache_files(cache)) == min(n + 1, 2)


# -- the loader ------------------------------------------------------------------------------------------------------

@pytest.mark.skipif(not hasattr(yaml, "CSafeLoader"), reason="PyYAML without libyaml")
@pytest.mark.parametrize("path", sorted(MAPPINGS.glob("*.yaml")), ids=lambda p: p.name)
def test_libyaml_reads_every_file_as_the_pure_python_loader_does(path):
    text = path.read_text(encoding="utf-8")
    assert yaml.load(text, Loader=yaml.CSafeLoader) == yaml.load(text, Loader=yaml.SafeLoader)


def test_without_libyaml_the_pure_python_loader_is_used(folder, monkeypatch):
    with_c = _uncached(folder, monkeypatch)
    monkeypatch.delattr(yaml, "CSafeLoader", raising=False)
    _same(_uncached(folder, monkeypatch), with_c)
