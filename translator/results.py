"""What a translation run produces: sites, diagnostics, per-file results.

Everything here is plain data so results cross process boundaries (-j) and go to JSON as is.
"""
from __future__ import annotations

from dataclasses import asdict, dataclass, field

# Worst first: a site's status is the worst of its diagnostics'.
STATUSES = ("manual", "partial", "converted")


@dataclass
class Diagnostic:
    code: str       # stable, defined in mappings/diagnostics.yaml
    status: str     # converted | partial | manual
    path: str
    line: int
    col: int        # 1-based, in characters
    message: str
    cell: int | None = None    # a notebook's cell (1-based, among all its cells); line counts in the cell

    def __str__(self) -> str:
        where = self.path if self.cell is None else f"{self.path}:{self.cell}"
        return f"{where}:{self.line}:{self.col}: {self.code} [{self.status}] {self.message}"


@dataclass
class Site:
    """One use of a source-framework API that the translator handled (or had to leave)."""

    path: str
    line: int
    col: int
    api: str        # qualified name of the source API, e.g. torch.utils.checkpoint.checkpoint
    diagnostics: list[Diagnostic] = field(default_factory=list)
    cell: int | None = None    # a notebook's cell (1-based); line counts in the cell

    @property
    def status(self) -> str:
        found = {d.status for d in self.diagnostics} or {"converted"}
        return next(s for s in STATUSES if s in found)

    def to_dict(self) -> dict:
        d = asdict(self)
        d["status"] = self.status
        return d


@dataclass
class FileResult:
    path: str
    changed: bool = False
    new_data: bytes | None = None   # the rewritten file, when changed
    sites: list[Site] = field(default_factory=list)
    notes: list[Diagnostic] = field(default_factory=list)  # file-level, not tied to one site
    error: str | None = None        # why the file could not be processed
    holders: list[str] = field(default_factory=list)  # attributes this file assigns torch's checkpoint to
    facts: dict | None = None       # --scope model: the module's classes and imports (translator/project.py)
    units: dict | None = None       # --scope model: its classes and functions (project.module_units), lines its own

    def to_dict(self) -> dict:
        return {
            "path": self.path,
            "changed": self.changed,
            "error": self.error,
            "sites": [s.to_dict() for s in self.sites],
            "notes": [asdict(n) for n in self.notes],
            "holders": self.holders,
        }


class TranslateError(Exception):
    """A file that cannot be translated; the message names the file and says what to do."""
