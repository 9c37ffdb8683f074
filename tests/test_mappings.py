"""The mapping data (mappings/*.yaml) and its loader: what ships is valid and complete, the translator
and the data agree on every diagnostic code, and a broken mapping file fails with a message that
names the file and the key.
"""
from __future__ import annotations

import ast
import dataclasses
import json
import re
import shutil
import string
import textwrap
from pathlib import Path

import jsonschema
import pytest
import yaml

from recompat import mappings
from recompat.mappings import CORE_RULES, MODEL_RULES, TRAINING_RULES, Entry, MappingError, Param
from recompat.translator.translate import translate_bytes
from recompat.translator.results import STATUSES

ROOT = Path(__file__).resolve().parents[1]
MAPPINGS = Path(mappings.__file__).parent
TRANSLATOR = ROOT / "translator"
M = mappings.default()
SCHEMA = json.loads((MAPPINGS / "schema.json").read_text(encoding="utf-8"))
CODE = re.compile(r'"(RC\d\d\d)"')


def _yaml_files() -> list[Path]:
    return sorted(MAPPINGS.glob("*.yaml"))


def _fields(message: str) -> set[str]:
    return {f for _, f, _, _ in string.Formatter().parse(message) if f is not None}


# -- the shipped data --------------------------------------------------------------------------

def test_the_shipped_mappings_load_and_validate():
    loaded = mappings.load(MAPPINGS)
    assert loaded.entries and loaded.diagnostics
    assert [e.id for e in loaded.entries] == [e.id for e in M.entries]
    assert mappings.default() is M   # loaded once per process
    for path in _yaml_files():
        data = yaml.safe_load(path.read_text(encoding="utf-8")) or {}
        jsonschema.Draft202012Validator(SCHEMA).validate(data)


def test_the_schema_is_a_valid_schema_and_matches_the_dataclasses():
    jsonschema.Draft202012Validator.check_schema(SCHEMA)
    # every key the schema allows reaches a dataclass field (else the loader dies with a TypeError)
    defs = SCHEMA["$defs"]
    assert set(defs["param"]["properties"]) <= {f.name for f in dataclasses.fields(Param)}
    assert set(defs["entry"]["properties"]) <= {f.name for f in dataclasses.fields(Entry)}
    assert set(defs["tensor_pair"]["properties"]) <= {f.name for f in dataclasses.fields(mappings.TensorPair)}
    assert set(defs["layer_param"]["properties"]) <= {f.name for f in dataclasses.fields(Param)}


def test_layer_pairs_are_layer_entries_and_their_settings_name_both_sides():
    """A layer's weight correspondence and compared settings live in its entry (one per API pair); parameters.yaml
    adds only pairs with no entry, never one an entry has."""
    layered = [e for e in M.entries if e.tensors is not None]
    assert {e.id for e in layered} >= {"linear", "conv2d", "batchnorm1d", "batchnorm2d", "layernorm", "dropout",
                                       "embedding", "gelu"}
    # a pair translated one way only (InstanceNorm2d -> GroupNorm: GroupNorm comes back as GroupNorm) still
    # transfers weights both ways
    assert all(e.rule == "api_class" and e.source in ("both", "torch") for e in layered)
    assert all(p.compare is None for e in M.entries if e.tensors is None for p in e.params)
    entry_pairs = {(e.torch["api"], e.mindspore["api"]) for e in layered}
    assert not entry_pairs & {(e.torch["api"], e.mindspore["api"]) for e in M.layers}
    assert not {e.id for e in M.entries} & {e.id for e in M.layers}
    for e in M.layer_pairs:
        for p in e.settings:
            assert p.torch and (p.mindspore or p.compare.get("read")), (e.id, p)


def _passes():
    """Each pass's rule registry, by the side it translates from."""
    from recompat.translator import mindspore_to_torch, models, torch_to_mindspore

    return {"torch": [torch_to_mindspore.RULES, models.RULES], "mindspore": [mindspore_to_torch.RULES, models.RULES]}


def test_every_rule_is_one_the_translator_applies():
    passes = _passes()
    handled = set().union(*(r.names for rs in passes.values() for r in rs))
    # every rule is the translator's; the training pairs' (read by compat/training.py too) are the model pass's
    assert set(SCHEMA["$defs"]["entry"]["properties"]["rule"]["enum"]) == handled
    assert {e.rule for e in M.training} == set(TRAINING_RULES) and not {e.rule for e in M.entries} & set(TRAINING_RULES)
    from recompat.translator import models

    assert models.RULES.names == set(MODEL_RULES)   # the core set and training pairs are the whole-model pass's only
    for e in (*M.entries, *M.training):
        for side in _sides(e):
            assert any(e.rule in r.names for r in passes[side]), f"{e.id}: no {side} pass applies rule {e.rule}"


def test_a_mark_cell_entry_says_whether_torch_wraps_or_marks_in_place():
    marks = [e for e in M.entries if e.rule == "mark_cell"]
    assert marks and all(e.form in ("wrapper", "in_place") for e in marks), [(e.id, e.form) for e in marks]


def test_a_tensor_attribute_entry_names_a_data_attribute_of_each_tensor_class():
    """...or, where the target's Tensor has none (torch's requires_grad), a recompat.runtime function of the
    tensor, which translation calls with it (x.requires_grad -> requires_grad(x))."""
    from recompat.mappings import signature_arguments

    attrs = [e for e in M.entries if e.rule == "tensor_attribute"]
    assert attrs
    for e in attrs:
        for side in ("torch", "mindspore"):
            fw = M.frameworks[side]
            cls, _, name = e.names(side)[0].rpartition(".")
            if cls == "recompat.runtime" and side != e.source:
                assert [a.arg for a in signature_arguments(getattr(e, side)["signature"]).args] == ["tensor"], e.id
                continue
            assert cls == fw.tensor_class and name in fw.tensor_attributes, (e.id, side)


def test_a_rule_has_one_handler_per_kind_of_use():
    from recompat.translator.rules import Rules

    rules = Rules("test")
    rules.register("r")(lambda *a: None)
    with pytest.raises(ValueError, match="rule 'r' has two handlers for 'call'"):
        rules.register("r")(lambda *a: None)
    assert rules.handler("r", "reference") is None and rules.names == {"r"}


def _sides(entry) -> tuple[str, ...]:
    """The sides an entry is translated from: both for most of the core API set."""
    return ("torch", "mindspore") if entry.source == "both" else (entry.source,)


@pytest.mark.parametrize("source", ["torch", "mindspore"])
def test_source_names_are_unique_across_entries(source):
    names = [n for e in M.entries if e.source == source and e.rule not in CORE_RULES for n in e.source_names]
    assert names and len(names) == len(set(names))
    assert set(M.by_torch_name if source == "torch" else M.by_mindspore_name) == set(names)


def _signature(text: str) -> tuple[str, list[str]]:
    """(the name, the parameters as written in mappings: `*args`, `**kwargs` keep their stars)."""
    from recompat.reports import signatures

    return text.partition("(")[0].strip(), list(signatures.names(text))


@pytest.mark.parametrize("entry", M.entries, ids=lambda e: e.id)
def test_signatures_parse_and_name_their_api(entry):
    for side in ("torch", "mindspore"):
        name, params = _signature(getattr(entry, side)["signature"])
        assert getattr(entry, side)["api"].endswith(name), (side, name)
        assert len(params) == len(set(params))


@pytest.mark.parametrize("entry", M.entries, ids=lambda e: e.id)
def test_params_cover_every_parameter_of_the_source_signature(entry):
    if entry.rule == "method_name":   # forward's parameters are the model's own
        return
    for side in _sides(entry):
        _, params = _signature(getattr(entry, side)["signature"])
        listed = {getattr(p, side) for p in entry.params if getattr(p, side) is not None}
        missing = sorted(set(params) - listed - {"self"})
        assert not missing, f"{entry.id}: no params item for {side}'s {missing}"


@pytest.mark.parametrize("entry", M.entries, ids=lambda e: e.id)
def test_params_outside_the_signature_come_from_its_kwargs(entry):
    """A params item for a name the signature lacks (preserve_rng_state) needs a **kwargs to come from."""
    for side in _sides(entry):
        _, params = _signature(getattr(entry, side)["signature"])
        extra = {getattr(p, side) for p in entry.params if getattr(p, side) is not None} - set(params)
        assert not extra or any(p.startswith("**") for p in params), (entry.id, side, extra)


@pytest.mark.parametrize("entry", M.entries, ids=lambda e: e.id)
def test_each_param_is_a_consistent_decision(entry):
    core = entry.rule in CORE_RULES
    torch_names = [p.torch for p in entry.params if p.torch is not None]
    ms_names = [p.mindspore for p in entry.params if p.mindspore is not None]
    if not core:   # the core set may pair one name twice (Dropout p <-> p, p <-> keep_prob): the first row wins
        assert len(torch_names) == len(set(torch_names)), entry.id
        assert len(ms_names) == len(set(ms_names)), entry.id
    for p in entry.params:
        where = f"{entry.id}: {p.torch or p.mindspore}"
        target = "mindspore" if entry.source == "torch" else "torch"
        assert p.torch is not None or p.mindspore is not None, where
        if p.action == "drop" and core:   # no silent drop: RC306 shows `why`, or the code given
            assert p.why or p.code, where
        elif p.action == "drop":          # no silent drop: a dropped argument always has its diagnostic
            assert getattr(p, target) is None and p.code, where
        if p.action == "rename":
            assert p.torch and p.mindspore and p.torch != p.mindspore, where
        if p.values:
            assert p.action == "rename" or core, where
        for override in (p.when_reentrant, p.when_non_reentrant, p.when_dynamic):
            if override and override["action"] == "set":
                assert "value" in override, where
        for text in (p.note, entry.summary):
            assert text["en"].strip() and text["zh"].strip(), where


def test_every_rename_has_a_diagnostic_code():
    silent = [f"{e.id}.{p.torch}" for e in M.entries if e.rule not in CORE_RULES   # the core set: RC300 per site
              for p in e.params if p.action == "rename" and not p.code]
    assert silent == []


def test_support_code_parses_and_defines_the_mindspore_api():
    for e in M.entries:
        if e.rule == "recompute_sequential":
            assert e.support_code, e.id
        if e.support_code:
            tree = ast.parse(e.support_code.replace("{ms}", "mindspore"))
            assert [n.name for n in tree.body if isinstance(n, ast.FunctionDef)] == [e.mindspore["api"]]
            _, params = _signature(e.mindspore["signature"])
            assert [a.arg for a in tree.body[0].args.args] == params


# -- diagnostic codes: the data and the translator agree ---------------------------------------

def _translator_codes() -> set[str]:
    return {c for path in TRANSLATOR.glob("*.py") for c in CODE.findall(path.read_text(encoding="utf-8"))}


def _mapping_codes() -> set[str]:
    return {c for e in (*M.entries, *M.table) for p in e.params for _, c in p.codes}


def test_diagnostics_are_well_formed():
    assert M.diagnostics
    for code, spec in M.diagnostics.items():
        assert re.fullmatch(r"RC\d{3}", code)
        assert spec["status"] in STATUSES
        assert spec["message"].strip()
        _fields(spec["message"])   # a valid str.format template


def test_every_code_the_translator_uses_is_defined():
    used = _translator_codes() | _mapping_codes()
    assert used, "no code found: has the translator moved?"
    assert sorted(used - M.diagnostics.keys()) == []


@pytest.mark.parametrize("code", sorted(M.diagnostics))
def test_every_defined_code_is_used(code):
    assert code in _translator_codes() | _mapping_codes()


def _diag_calls():
    """(codes, or None for a code taken from the mappings; the keyword names passed) per self.diag(...) call.

    A code is a literal in the call, or a local name assigned literals (`code = "RC130" if ... else "RC132"`)."""
    def literals(node):
        return {n.value for n in ast.walk(node) if isinstance(n, ast.Constant) and isinstance(n.value, str)
                and re.fullmatch(r"RC\d{3}", n.value)}

    for path in TRANSLATOR.glob("*.py"):
        for func in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if not isinstance(func, (ast.FunctionDef, ast.AsyncFunctionDef)):
                continue
            local = {}
            for n in ast.walk(func):
                if isinstance(n, ast.Assign) and len(n.targets) == 1 and isinstance(n.targets[0], ast.Name):
                    local.setdefault(n.targets[0].id, set()).update(literals(n.value))
            for node in ast.walk(func):
                if isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) and node.func.attr == "diag":
                    assert len(node.args) >= 2, ast.unparse(node)
                    arg = node.args[1]
                    codes = literals(arg) or (local.get(arg.id) if isinstance(arg, ast.Name) else None) or None
                    yield codes, {k.arg for k in node.keywords}, f"{path.name}:{node.lineno}"


def test_every_message_gets_the_fields_it_formats():
    calls = list(_diag_calls())
    assert calls
    for codes, given, where in calls:
        for code in codes or ():
            missing = _fields(M.diagnostics[code]["message"]) - given
            assert not missing, f"{where}: {code} needs {missing}"
    # a code taken from the mappings is formatted by every call that takes one
    # (a call spreading **fields, as translator/models.py does for the core set, is checked below)
    given_dynamic = set.intersection(*[g for c, g, _ in calls if c is None and None not in g])
    for code in {c for e in M.entries if e.rule not in CORE_RULES for p in e.params for _, c in p.codes}:
        assert _fields(M.diagnostics[code]["message"]) <= given_dynamic, code
    for code in {c for e in M.entries if e.rule in CORE_RULES for p in e.params for _, c in p.codes}:
        # the core set's codes are formatted by translator/models.py with the dropped param's fields
        assert _fields(M.diagnostics[code]["message"]) <= {"api", "param", "value", "why"}, code


SNIPPETS = {
    "every_rule": """
        import functools
        from torch.utils.checkpoint import checkpoint, checkpoint_sequential
        from torch.distributed._composable import checkpoint as mark
        from torch.distributed.algorithms._checkpoint.checkpoint_wrapper import (
            CheckpointImpl, apply_activation_checkpointing, checkpoint_wrapper)

        HOOKS = [checkpoint]
        ckpt = functools.partial(checkpoint, use_reentrant=False, debug=True, **opts)


        class Net(nn.Module):
            def __init__(self):
                super().__init__()
                self.block = checkpoint_wrapper(Block(), checkpoint_fn=f, checkpoint_impl=CheckpointImpl.REENTRANT)
                self.drop = nn.Dropout(0.1)
                mark(self.block, x=1)
                apply_activation_checkpointing(self, checkpoint_wrapper_fn=w, check_fn=is_block, auto_wrap_policy=None)
                apply_activation_checkpointing(self, auto_wrap_policy=p)

            def forward(self, x, flag, kw, seq):
                x = checkpoint(self._inner, x, preserve_rng_state=False, determinism_check="none", context_fn=c)
                x = checkpoint(self.layer.forward, x, use_reentrant=flag, early_stop=True, mask=m, **kw)
                x = checkpoint(*seq)
                x = ckpt(self.layer, x)
                return checkpoint_sequential(self.layers, 2, x, use_reentrant=True, preserve_rng_state=False)
    """,
}


@pytest.mark.parametrize("style", ["function", "cell"])
def test_translate_bytes_emits_only_defined_codes(style):
    """Over the example project and a file that uses every rule: codes exist, statuses and messages match."""
    files = {str(p): p.read_bytes() for p in sorted((ROOT / "examples").rglob("*.py"))}
    files.update({name: textwrap.dedent(code).encode() for name, code in SNIPPETS.items()})
    seen = set()
    for name, data in files.items():
        result = translate_bytes(data, name, style=style)
        for d in [*result.notes, *(d for s in result.sites for d in s.diagnostics)]:
            assert d.code in M.diagnostics, (name, str(d))
            assert d.status == M.diagnostics[d.code]["status"], (name, str(d))
            assert not re.search(r"\{\w+\}", d.message), (name, str(d))   # every field formatted
            seen.add(d.code)
    assert {"RC100", "RC101", "RC120", "RC130", "RC131", "RC132", "RC133", "RC190"} <= seen


# -- a broken mapping file fails clearly -------------------------------------------------------

@pytest.fixture
def folder(tmp_path):
    """A copy of the shipped mapping files, to break."""
    for path in _yaml_files():
        shutil.copy(path, tmp_path / path.name)
    return tmp_path


def _edit(path: Path, change) -> None:
    data = yaml.safe_load(path.read_text(encoding="utf-8"))
    change(data)
    path.write_text(yaml.safe_dump(data, allow_unicode=True, sort_keys=False), encoding="utf-8")


def _error(folder: Path) -> str:
    with pytest.raises(MappingError) as err:
        mappings.load(folder)
    return str(err.value)


def test_an_unbroken_copy_loads(folder):
    _edit(folder / "checkpoint.yaml", lambda d: None)   # a YAML round trip changes nothing that matters
    loaded = mappings.load(folder)
    assert [e.id for e in loaded.entries] == [e.id for e in M.entries]
    assert loaded.diagnostics == M.diagnostics


def test_a_folder_without_the_frameworks_facts_is_refused(folder):
    (folder / "frameworks.yaml").unlink()
    assert "no frameworks.yaml facts for mindspore, torch" in _error(folder)


def test_an_empty_file_adds_nothing(folder):
    (folder / "empty.yaml").write_text("# nothing yet\n", encoding="utf-8")
    assert len(mappings.load(folder).entries) == len(M.entries)


@pytest.mark.parametrize("change, key, words", [
    (lambda d: d["entries"][0]["params"][2].update(colour="red"),
     "entries/0/params/2", ["colour", "unexpected"]),
    (lambda d: d["entries"][1]["params"][0].pop("note"),
     "entries/1/params/0", ["'note' is a required property"]),
    (lambda d: d["entries"][0]["params"][3].update(action="copy"),
     "entries/0/params/3/action", ["'copy' is not one of"]),
    (lambda d: d["entries"][0]["params"][3].update(code="X12"),
     "entries/0/params/3/code", ["X12", "does not match"]),
    (lambda d: d["entries"][0]["params"][3]["when_reentrant"].update(action="maybe"),
     "entries/0/params/3/when_reentrant/action", ["'maybe' is not one of"]),
    (lambda d: d["entries"][2].update(rule="mark_everything"),
     "entries/2/rule", ["'mark_everything' is not one of"]),
    (lambda d: d["entries"][0]["summary"].pop("zh"),
     "entries/0/summary", ["'zh' is a required property"]),
    (lambda d: d["entries"][0].update(params={"function": "block"}),
     "entries/0/params", ["is not of type 'array'"]),
    (lambda d: d.update(extras=[]),
     "(top)", ["extras", "unexpected"]),
])
def test_a_schema_violation_names_the_file_and_the_key(folder, change, key, words):
    _edit(folder / "checkpoint.yaml", change)
    message = _error(folder)
    assert str(folder / "checkpoint.yaml") in message
    assert f"at {key}:" in message, message
    for w in words:
        assert w in message, message


def test_a_bad_diagnostic_names_the_file_and_the_key(folder):
    _edit(folder / "diagnostics.yaml", lambda d: d["diagnostics"]["RC100"].update(status="done"))
    message = _error(folder)
    assert str(folder / "diagnostics.yaml") in message and "at diagnostics/RC100/status:" in message
    assert "'done' is not one of" in message


def test_a_bad_diagnostic_code_name_is_refused(folder):
    _edit(folder / "diagnostics.yaml", lambda d: d["diagnostics"].update(X100={"status": "partial", "message": "m"}))
    message = _error(folder)
    assert str(folder / "diagnostics.yaml") in message and "X100" in message


def test_invalid_yaml_names_the_file_and_the_line(folder):
    path = folder / "checkpoint.yaml"
    path.write_text("entries:\n  - id: checkpoint\n    rule: [recompute_call\n", encoding="utf-8")
    message = _error(folder)
    assert message.startswith(f"{path}: not valid YAML")
    assert "line 3" in message or "line 4" in message, message


def test_a_fallback_for_no_entry_of_its_api_names_the_entry_and_what_it_must_be(folder):
    """fallback_for names the entry a fallback stands in for: one of the same torch API and rule, else refused."""
    def point_elsewhere(d):
        next(e for e in d["entries"] if e["id"] == "layernorm_exact")["fallback_for"] = "groupnorm"

    _edit(folder / "nn_modules.yaml", point_elsewhere)
    message = _error(folder)
    assert "nn_modules.yaml" in message and "fallback_for: groupnorm is no entry of torch.nn.LayerNorm" in message
    assert "the same torch API and rule" in message


def test_a_fallback_is_reached_through_its_entry_never_by_its_own_name():
    maps = mappings.default()
    layernorm = maps.model_scope["torch"]["torch.nn.LayerNorm"]
    assert layernorm.id == "layernorm" and maps.fallback(layernorm).id == "layernorm_exact"


def test_a_code_defined_twice_names_the_file(folder):
    (folder / "more.yaml").write_text('diagnostics:\n  RC100:\n    status: converted\n    message: "again"\n',
                                      encoding="utf-8")
    message = _error(folder)
    assert "RC100" in message and "defined twice" in message
    assert str(folder / "more.yaml") in message or str(folder / "diagnostics.yaml") in message


def _duplicate_id(d):
    d["entries"][1]["id"] = "checkpoint"


def _undefined_code(d):
    d["entries"][0]["params"][5]["code"] = "RC999"


def test_a_duplicate_entry_id_is_refused(folder):
    _edit(folder / "checkpoint.yaml", _duplicate_id)
    assert "entry ids defined twice: checkpoint" in _error(folder)


def test_a_param_code_missing_from_diagnostics_is_refused(folder):
    _edit(folder / "checkpoint.yaml", _undefined_code)
    message = _error(folder)
    assert "RC999" in message and "diagnostics" in message


@pytest.mark.parametrize("change, key", [(_duplicate_id, "entries/1/id"), (_undefined_code, "entries/0/params/5/code")])
def test_cross_checks_name_the_file_and_the_key(folder, change, key):
    _edit(folder / "checkpoint.yaml", change)
    message = _error(folder)
    assert str(folder / "checkpoint.yaml") in message and key in message, message


def test_renames_agree_in_both_directions():
    """A parameter renamed MindSpore -> torch is the inverse of a rename torch -> MindSpore."""
    family = [e for e in M.entries if e.rule not in CORE_RULES]   # the core set's entries are one row both ways
    forward = {(p.torch, p.mindspore) for e in family if e.source == "torch" for p in e.params
               if p.action == "rename"}
    reverse = {(p.torch, p.mindspore) for e in family if e.source == "mindspore" for p in e.params
               if p.action == "rename"}
    assert reverse and reverse <= forward


# -- defaults: each side's comes from its recorded signature; the YAML only overrides --------------------

def _yaml_params() -> list[tuple[Path, dict, int, dict]]:
    """(file, raw entry, row index, raw param row) for every params row of the shipped YAML, as written."""
    return [(path, e, k, p) for path in _yaml_files()
            for e in (yaml.safe_load(path.read_text(encoding="utf-8")) or {}).get("entries", [])
            for k, p in enumerate(e["params"])]


def test_defaults_are_the_signatures_unless_the_yaml_overrides_them():
    """Read again with reports.signatures (a parser of its own): a param's default is its signature's, or the
    YAML's override where the signature has another, none, or no such parameter."""
    from recompat.reports import signatures
    from recompat.mappings import same

    rows = _yaml_params()
    assert len(rows) == sum(len(e.params) for e in M.entries)
    overrides = 0
    for path, raw, k, row in rows:
        param = M.entry(raw["id"]).params[k]
        for side in ("torch", "mindspore"):
            found = {p.name: p.default for p in signatures.parse(raw[side]["signature"])}.get(row[side] or "")
            key, where = f"{side}_default", f"{path.name}: {raw['id']}/params/{k} ({side} {row[side]})"
            if key in row:
                overrides += 1
                assert getattr(param, key) == row[key], where
                assert found is None or not same(row[key], found), where
            else:
                assert getattr(param, key) == found, where
    assert overrides   # the cases schema.json lists (param/torch_default); the ~200 repeats of the signatures went


@pytest.mark.parametrize("entry_id, torch_name, mindspore_name, torch_default, mindspore_default", [
    # what mappings/ wrote out before the defaults were derived (git show b9dd458:mappings/...)
    ("linear", "bias", "has_bias", "True", "True"),
    ("conv2d", "bias", "has_bias", "True", "False"),
    ("conv2d", None, "pad_mode", "'valid'", "'same'"),            # torch: an override (no such parameter)
    ("conv2d", None, "data_format", "'NCHW'", "'NCHW'"),
    ("batchnorm2d", "momentum", "momentum", "0.1", "0.9"),
    ("layernorm", "eps", "epsilon", "1e-05", "1e-07"),
    ("dropout", "p", "p", "0.5", "None"),
    ("dropout", "p", "keep_prob", "0.5", "0.5"),
    ("gelu", "approximate", "approximate", "'none'", "True"),
    ("maxpool2d", "stride", "stride", "kernel_size", "1"),        # torch: an override (its None means kernel_size)
    ("ms_softmax", "dim", "axis", "None", "-1"),
    ("torch_sum", "dim", "dim", "None", "None"),                  # torch: an override (an overload without it)
    ("checkpoint", "use_reentrant", "use_reentrant", "None: warns, then True", "True"),
    ("checkpoint", "early_stop", "early_stop", "True", "True"),
    ("checkpoint_wrapper", "checkpoint_impl", "use_reentrant", "CheckpointImpl.NO_REENTRANT", "True"),
    ("apply_activation_checkpointing", "checkpoint_wrapper_fn", None, "checkpoint_wrapper", None),
    ("recompute", "preserve_rng_state", "save_rng_state", "True", "True"),   # both not in the signatures
])
def test_derived_defaults_are_what_the_yaml_said(entry_id, torch_name, mindspore_name, torch_default,
                                                 mindspore_default):
    p = next(p for p in M.entry(entry_id).params if (p.torch, p.mindspore) == (torch_name, mindspore_name))
    assert (p.torch_default, p.mindspore_default) == (torch_default, mindspore_default)


def test_a_parameter_without_a_default_has_none():
    linear = M.entry("linear")
    assert linear.param("in_features", "torch").torch_default is None               # required
    assert linear.param("device", "torch").mindspore_default is None                # no MindSpore counterpart
    module = M.entry("nn_module")
    assert [p.torch_default for p in module.params if p.torch and p.torch.startswith("*")] == [None, None]
    assert M.entry("checkpoint").param("preserve_rng_state").torch_default is None  # taken from **kwargs


def test_signature_defaults_reads_every_kind_of_parameter():
    assert mappings.signature_defaults("f(a, b=1, /, c='x', *args, d, e=lambda _: True, **kw) -> Tensor") == {
        "b": "1", "c": "'x'", "e": "lambda _: True"}
    assert mappings.signature_defaults("Cell.recompute(*, use_reentrant=True, **kwargs)") == {"use_reentrant": "True"}
    assert mappings.signature_defaults("no call head") is None


def _row(d: dict, entry_id: str, side: str, name: str) -> dict:
    entry = next(e for e in d["entries"] if e["id"] == entry_id)
    return next(p for p in entry["params"] if p[side] == name)


@pytest.mark.parametrize("file, entry_id, side, name, value, index", [
    ("nn_modules.yaml", "linear", "torch", "bias", "True", "entries/2/params/2/torch_default"),
    ("nn_modules.yaml", "layernorm", "mindspore", "epsilon", "1e-7", None),     # the same number, written otherwise
    ("nn_functions.yaml", "ms_softmax", "mindspore", "axis", "-1", None),
    ("checkpoint.yaml", "checkpoint", "mindspore", "use_reentrant", "True", "entries/0/params/2/mindspore_default"),
    ("recompute.yaml", "recompute", "mindspore", "early_stop", "True", None),
])
def test_a_default_that_repeats_the_signature_is_refused(folder, file, entry_id, side, name, value, index):
    _edit(folder / file, lambda d: _row(d, entry_id, side, name).update({f"{side}_default": value}))
    message = _error(folder)
    assert str(folder / file) in message and f"({entry_id}, {side} parameter {name})" in message, message
    assert f"{value} repeats the default of the recorded {side} signature; leave it out" in message, message
    if index:
        assert index in message, message


def test_a_default_that_differs_from_the_signature_is_an_override(folder):
    _edit(folder / "nn_modules.yaml", lambda d: _row(d, "linear", "torch", "bias").update(torch_default="False"))
    assert mappings.load(folder).entry("linear").param("bias", "torch").torch_default == "False"


def test_an_unreadable_signature_is_refused(folder):
    _edit(folder / "checkpoint.yaml", lambda d: d["entries"][0]["torch"].update(signature="checkpoint(function, *"))
    message = _error(folder)
    assert str(folder / "checkpoint.yaml") in message and "entries/0/torch/signature (checkpoint)" in message
