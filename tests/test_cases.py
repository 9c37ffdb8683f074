"""Translation cases: whole files before and after, one folder per case.

    tests/cases/<direction>/<name>/before.py    the input
    tests/cases/<direction>/<name>/after.py     the whole expected output, reviewed by hand
    tests/cases/<direction>/<name>/UNCHANGED    instead of after.py: the translation leaves the file as it is
                                                (the note says why)
    tests/cases/<direction>/<name>/case.yaml    optional: options and expectations (OPTIONS below)

`direction` is `to_mindspore` or `to_torch`. Each case is one test, id `direction/name`: before.py is translated
with the case's options and the whole output must be after.py (a mismatch fails with the unified diff); the
output translated again must change nothing; and the diagnostics must be the listed ones. The case files are
data: pytest does not collect them (tests/conftest.py) and nothing imports them. There is no command that
rewrites after.py from the translator: a new case's after.py is read line by line before it is kept.

A case whose after.py is what the translator *should* write but does not yet carries `known_bug:` (the
suspected bug, in words): it runs as a strict xfail, so it fails the day the bug is fixed, to be turned into a
plain case.
"""
from __future__ import annotations

import ast
import difflib
from dataclasses import dataclass, field
from pathlib import Path

import pytest
import yaml

from recompat.constants import DEFAULT_STYLE
from recompat.translator.translate import translate_bytes

CASES = Path(__file__).parent / "cases"
DIRECTIONS = {"to_mindspore": "mindspore", "to_torch": "torch"}
UNCHANGED = "UNCHANGED"
PATH = "model.py"   # the name the translator is given for every case's file

# case.yaml keys: translation options, then expectations
OPTIONS = {
    "style": "function | cell (torch -> MindSpore only); default: the translator's (DEFAULT_STYLE, cell)",
    "scope": "checkpoint | model; default checkpoint",
    "holders": "attributes another file of the tree assigns torch's checkpoint to (translate_bytes(holders=))",
    "codes": "every diagnostic code of the file's sites, in order (site by site, as the translator reports them)",
    "statuses": "each site's status, in order",
    "apis": "each site's source API, in order",
    "idempotent": "false where translating after.py again is expected to change it (say why in known_bug/note)",
    "known_bug": "after.py is the correct output the translator does not give yet: a strict xfail, with this reason",
    "note": "free text for the reader",
}


@dataclass
class Case:
    folder: Path
    direction: str
    before: bytes
    after: bytes | None              # None: the file must be left as it is
    options: dict = field(default_factory=dict)

    @property
    def id(self) -> str:
        return f"{self.direction}/{self.folder.name}"

    @property
    def where(self) -> str:
        return self.folder.relative_to(CASES.parent.parent).as_posix()

    def translate(self, data: bytes):
        return translate_bytes(data, PATH, to=DIRECTIONS[self.direction],
                               style=self.options.get("style", DEFAULT_STYLE),
                               scope=self.options.get("scope", "checkpoint"),
                               holders=tuple(self.options.get("holders", ())))


def load_case(folder: Path) -> Case:
    """Read one case folder; a malformed one raises ValueError naming what is wrong."""
    direction = folder.parent.name
    if direction not in DIRECTIONS:
        raise ValueError(f"{folder}: direction {direction!r} is none of {sorted(DIRECTIONS)}")
    if not (folder / "before.py").is_file():
        raise ValueError(f"{folder}: no before.py")
    has_after, has_note = (folder / "after.py").is_file(), (folder / UNCHANGED).is_file()
    if has_after == has_note:
        raise ValueError(f"{folder}: needs exactly one of after.py and {UNCHANGED} (a note saying why nothing changes)")
    options = {}
    if (folder / "case.yaml").is_file():
        options = yaml.safe_load((folder / "case.yaml").read_text(encoding="utf-8")) or {}
        unknown = sorted(set(options) - set(OPTIONS))
        if unknown:
            raise ValueError(f"{folder}/case.yaml: unknown keys {unknown}; known: {sorted(OPTIONS)}")
    return Case(folder, direction, (folder / "before.py").read_bytes(),
                (folder / "after.py").read_bytes() if has_after else None, options)


def case_folders() -> list[Path]:
    return sorted(p for d in DIRECTIONS for p in (CASES / d).iterdir() if p.is_dir())


def _params():
    params = []
    for folder in case_folders():
        case = load_case(folder)
        marks = [pytest.mark.xfail(strict=True, reason=case.options["known_bug"])] \
            if case.options.get("known_bug") else []
        params.append(pytest.param(case, id=case.id, marks=marks))
    return params


def mismatch(where: str, expected: str, got: str, expected_name: str = "after.py",
             got_name: str = "before.py, translated") -> str | None:
    """None when `got` is `expected`; otherwise the failure message: the case folder and a unified diff
    (lines starting with - are expected and missing, + are what the translator wrote instead)."""
    if got == expected:
        return None
    diff = difflib.unified_diff(expected.splitlines(keepends=True), got.splitlines(keepends=True),
                                f"{where}/{expected_name} (expected)", f"{where}/{got_name} (got)")
    lines = [line if line.endswith("\n") else line + "\n\\ No newline at end of file\n" for line in diff]
    if expected.splitlines() == got.splitlines():
        lines.append("(only the line endings differ)\n")
    return f"{where}: the translation is not {expected_name}\n" + "".join(lines)


def check_case(case: Case) -> None:
    result = case.translate(case.before)
    before = case.before.decode("utf-8")
    if case.after is None:
        got = before if result.new_data is None else result.new_data.decode("utf-8")
        message = mismatch(case.where, before, got, "before.py (UNCHANGED: nothing may change)")
        if message or result.new_data is not None:
            pytest.fail(message or f"{case.where}: the file is rewritten with the same text (changed=True)",
                        pytrace=False)
        expected = before
    else:
        expected = case.after.decode("utf-8")
        ast.parse(expected, f"{case.where}/after.py")
        got = before if result.new_data is None else result.new_data.decode("utf-8")
        message = mismatch(case.where, expected, got)
        if message:
            pytest.fail(message, pytrace=False)

    for key, actual in (("codes", [d.code for s in result.sites for d in s.diagnostics]),
                        ("statuses", [s.status for s in result.sites]),
                        ("apis", [s.api for s in result.sites])):
        if key in case.options and actual != case.options[key]:
            pytest.fail(f"{case.where}: {key} differ\n  case.yaml: {case.options[key]}\n  got:       {actual}\n"
                        + "".join(f"  {d}\n" for s in result.sites for d in s.diagnostics), pytrace=False)

    if case.options.get("idempotent", True):
        again = case.translate(expected.encode("utf-8"))
        if again.new_data is not None:
            message = mismatch(case.where, expected, again.new_data.decode("utf-8"),
                               got_name="after.py translated again")
            pytest.fail(f"translating the output again must change nothing\n{message or '(changed=True)'}",
                        pytrace=False)


@pytest.mark.parametrize("case", _params())
def test_case(case: Case):
    check_case(case)


# -- the case runner itself ----------------------------------------------------------------------------

def test_there_are_cases_in_both_directions_and_styles_and_scopes():
    cases = [load_case(f) for f in case_folders()]
    for direction in DIRECTIONS:
        assert sum(c.direction == direction for c in cases) >= 10, direction
    assert any(c.options.get("style") == "function" for c in cases)   # the default is cell
    assert {c.direction for c in cases if c.options.get("scope") == "model"} == set(DIRECTIONS)
    assert any(c.after is None for c in cases)


def test_a_wrong_expectation_fails_with_the_diff():
    """A planted bug: the comparison fails on a wrong after.py and shows which lines differ."""
    case = load_case(CASES / "to_mindspore" / "existing_mindspore_alias_reused")
    wrong = case.after.decode().replace("use_reentrant=False, early_stop=False", "use_reentrant=False")
    planted = Case(case.folder, case.direction, case.before, wrong.encode(), case.options)
    with pytest.raises(pytest.fail.Exception) as failure:
        check_case(planted)
    message = str(failure.value)
    assert message.startswith("tests/cases/to_mindspore/existing_mindspore_alias_reused: the translation is not after.py")
    assert "--- tests/cases/to_mindspore/existing_mindspore_alias_reused/after.py (expected)\n" in message
    assert "\n-    return ms.recompute(block, x, use_reentrant=False)\n" in message
    assert "\n+    return ms.recompute(block, x, use_reentrant=False, early_stop=False)\n" in message
    assert "\n def f(block, x):\n" in message, "context lines are shown"


def test_a_wrong_code_list_fails_naming_both():
    case = load_case(CASES / "to_mindspore" / "existing_mindspore_alias_reused")
    planted = Case(case.folder, case.direction, case.before, case.after, {**case.options, "codes": ["RC100"]})
    with pytest.raises(pytest.fail.Exception, match=r"codes differ\n  case.yaml: \['RC100'\]\n  got:       \['RC117', 'RC100'\]"):
        check_case(planted)


def test_an_unchanged_case_fails_when_the_file_is_rewritten():
    case = load_case(CASES / "to_mindspore" / "existing_mindspore_alias_reused")
    planted = Case(case.folder, case.direction, case.before, None, case.options)
    with pytest.raises(pytest.fail.Exception, match=r"nothing may change") as failure:
        check_case(planted)
    assert "\n+    return ms.recompute(block, x, use_reentrant=False, early_stop=False)\n" in str(failure.value)
    assert "\n-from torch.utils.checkpoint import checkpoint\n" in str(failure.value)


def test_only_line_endings_differ_is_said():
    message = mismatch("tests/cases/x", "a = 1\n", "a = 1\r\n")
    assert message is not None and "only the line endings differ" in message


def test_malformed_case_folders_are_refused(tmp_path):
    folder = tmp_path / "to_torch" / "broken"
    folder.mkdir(parents=True)
    (folder / "before.py").write_text("x = 1\n")
    with pytest.raises(ValueError, match="exactly one of after.py and UNCHANGED"):
        load_case(folder)
    (folder / "after.py").write_text("x = 1\n")
    (folder / "case.yaml").write_text("code: [RC100]\n")
    with pytest.raises(ValueError, match=r"unknown keys \['code'\]"):
        load_case(folder)
    other = tmp_path / "to_jax" / "x"
    other.mkdir(parents=True)
    with pytest.raises(ValueError, match="direction 'to_jax'"):
        load_case(other)
