"""Reading the JSON a run wrote, and writing files whole or not at all."""
from __future__ import annotations

import json
from pathlib import Path

from recompat import _files


class ReportError(Exception):
    """Bad input or output for a report or the docs; the message names the file and says what to do."""


def load_json(path: str | Path) -> dict:
    """The JSON object in ``path``; ReportError naming the file when it is missing, unreadable or not JSON."""
    path = Path(path)
    try:
        text = path.read_text(encoding="utf-8")
    except FileNotFoundError:
        raise ReportError(f"{path}: no such file — give the JSON a run wrote (recompat translate --json FILE, "
                          "recompat test --json FILE, or docs/mappings.json)") from None
    except IsADirectoryError:
        raise ReportError(f"{path}: is a folder, not a JSON file") from None
    except UnicodeDecodeError as exc:
        raise ReportError(f"{path}: not UTF-8 text ({exc.reason} at byte {exc.start}) — is it the JSON a run "
                          "wrote?") from None
    except OSError as exc:
        raise ReportError(f"{path}: cannot read it ({exc.strerror or exc})") from None
    try:
        doc = json.loads(text)
    except json.JSONDecodeError as exc:
        raise ReportError(f"{path}:{exc.lineno}:{exc.colno}: not valid JSON ({exc.msg}) — the file is damaged or "
                          "was cut short; write it again") from None
    if not isinstance(doc, dict):
        raise ReportError(f"{path}: holds a JSON {type(doc).__name__}, not the object a recompat run writes")
    return doc


def write_atomic(path: str | Path, data: bytes | str) -> None:
    """recompat._files.write_atomic (a reader sees the old file or the new one, never a part), for reports and
    docs: the folder is made if missing, a file that already holds ``data`` is left alone, and a failure is a
    ReportError naming the file."""
    path = Path(path)
    if isinstance(data, str):
        data = data.encode("utf-8")
    if path.is_dir():
        raise ReportError(f"{path}: is a folder — name a file to write")
    try:
        if path.is_file() and path.stat().st_size == len(data) and path.read_bytes() == data:
            return   # nothing to change: never rewritten
    except OSError:
        pass
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        _files.write_atomic(path, data)
    except OSError as exc:
        raise ReportError(f"{path}: cannot write it ({exc.strerror or exc}) — check that the folder "
                          f"{path.parent} exists and is writable") from None
