"""The mapping data: every fact about an API and every diagnostic, read from the YAML files here.

The translator, the docs and the reports read these objects; nothing else states an API fact.
"""
from __future__ import annotations

import functools
import json
from dataclasses import dataclass, field
from pathlib import Path

import yaml

HERE = Path(__file__).parent


class MappingError(Exception):
    """A mapping file that does not match the schema; the message names the file and the key."""


@dataclass(frozen=True)
class Param:
    torch: str | None
    mindspore: str | None
    action: str                       # keep | rename | drop
    note: dict
    code: str | None = None
    why: str | None = None
    values: dict = field(default_factory=dict)
    torch_default: str | None = None
    mindspore_default: str | None = None
    when_reentrant: dict | None = None      # the decision when MindSpore's reentrant form is used
    when_non_reentrant: dict | None = None  # ... and when its non-reentrant form is used


@dataclass(frozen=True)
class Entry:
    id: str
    rule: str
    torch: dict
    mindspore: dict
    summary: dict
    params: tuple[Param, ...]
    support_code: str | None = None

    @property
    def torch_names(self) -> tuple[str, ...]:
        """Every qualified name under which torch exposes this API."""
        return (self.torch["api"], *self.torch.get("aliases", ()))

    def param(self, torch_name: str) -> Param | None:
        return next((p for p in self.params if p.torch == torch_name), None)


@dataclass(frozen=True, eq=False)   # hashed by identity: derived data is cached per Mappings
class Mappings:
    entries: tuple[Entry, ...]
    diagnostics: dict                 # code -> {"status", "message"}

    @functools.cached_property
    def by_torch_name(self) -> dict[str, Entry]:
        return {name: e for e in self.entries for name in e.torch_names}

    def entry(self, entry_id: str) -> Entry:
        return next(e for e in self.entries if e.id == entry_id)


def _validate(data, path: Path):
    import jsonschema  # imported here: only loading pays for it

    schema = json.loads((HERE / "schema.json").read_text(encoding="utf-8"))
    errors = sorted(jsonschema.Draft202012Validator(schema).iter_errors(data), key=lambda e: list(e.path))
    if errors:
        lines = [f"  at {'/'.join(map(str, e.path)) or '(top)'}: {e.message}" for e in errors]
        raise MappingError(f"{path}: does not match mappings/schema.json:\n" + "\n".join(lines))


def load(folder: Path = HERE) -> Mappings:
    """Read and validate every *.yaml file in `folder`."""
    entries, diagnostics = [], {}
    for path in sorted(folder.glob("*.yaml")):
        try:
            data = yaml.safe_load(path.read_text(encoding="utf-8")) or {}
        except yaml.YAMLError as exc:
            raise MappingError(f"{path}: not valid YAML: {exc}") from None
        _validate(data, path)
        for code, spec in data.get("diagnostics", {}).items():
            if code in diagnostics:
                raise MappingError(f"{path}: diagnostic {code} is defined twice")
            diagnostics[code] = spec
        for raw in data.get("entries", []):
            params = tuple(Param(**p) for p in raw.pop("params"))
            entries.append(Entry(params=params, **raw))
    ids = [e.id for e in entries]
    dupes = {i for i in ids if ids.count(i) > 1}
    if dupes:
        raise MappingError(f"{folder}: entry ids defined twice: {', '.join(sorted(dupes))}")
    used = {c for e in entries for p in e.params
            for c in (p.code, (p.when_reentrant or {}).get("code"), (p.when_non_reentrant or {}).get("code")) if c}
    missing = sorted(used - diagnostics.keys())
    if missing:
        raise MappingError(f"{folder}: params name diagnostic codes that diagnostics.yaml lacks: {', '.join(missing)}")
    return Mappings(entries=tuple(entries), diagnostics=diagnostics)


@functools.lru_cache(maxsize=None)
def default() -> Mappings:
    """The mappings shipped with recompat, loaded once per process."""
    return load(HERE)
