"""Drift: the signatures mappings/ records (and the docs show) are the installed torch's and MindSpore's.

A failure names the entry, the side, the API and each difference (a parameter missing or extra, another kind,
another default), so that the day torch or MindSpore changes a signature, mappings/ and the docs are updated.
"""
from __future__ import annotations

import pytest

from recompat import mappings
from recompat.reports import docs, signatures

ENTRIES = mappings.default().entries + mappings.default().training
SIDES = [(e, side) for e in ENTRIES for side in ("torch", "mindspore")]


def _installed_object(entry, side):
    api = getattr(entry, side)["api"]
    if getattr(entry, side).get("library"):
        pytest.skip(f"{entry.id}: {api} is {getattr(entry, side)['library']}'s, which is not installed; "
                    f"tests/test_sweep.py checks it against the library's sources")
    if entry.support_code and "." not in api:
        # recompat's own function, added to translated files (checkpoint_sequential -> recompute_sequential)
        import mindspore

        namespace = {"mindspore": mindspore}
        exec(entry.support_code.replace("{ms}", "mindspore"), namespace)
        return namespace[api]
    return signatures.resolve(api)


@pytest.mark.runtime
@pytest.mark.parametrize("entry,side", SIDES, ids=[f"{e.id}-{side}" for e, side in SIDES])
def test_recorded_signature_is_the_installed_one(entry, side):
    recorded = getattr(entry, side)
    obj = _installed_object(entry, side)
    try:
        found = signatures.overloads(obj)
    except signatures.SignatureError as exc:   # e.g. torch.relu: a builtin with no docstring; a property
        pytest.skip(f"{entry.id}: {exc}; the recorded signature comes from the API's documentation")
    drifts = [signatures.drift(recorded["signature"], one) for one in found]   # any documented overload
    problems = [] if [] in drifts else drifts[0]
    assert not problems, (f"mappings entry {entry.id}: the {side} signature of {recorded['api']} differs from the "
                          f"installed {side}: " + "; ".join(problems)
                          + " — update the entry's signature (and its params), then run `recompat docs`")


@pytest.mark.runtime
@pytest.mark.parametrize("entry", [e for e in ENTRIES if e.torch.get("aliases") or e.mindspore.get("aliases")],
                         ids=lambda e: e.id)
def test_aliases_are_importable(entry):
    for side in ("torch", "mindspore"):
        if getattr(entry, side).get("library"):
            continue   # a third-party library's names: not installed here
        for alias in getattr(entry, side).get("aliases", ()):
            if entry.rule == "api_value":   # a value (a dtype): the alias is the same value under another name
                api = getattr(entry, side)["api"]
                assert signatures.resolve(alias) == signatures.resolve(api), f"{entry.id}: {alias} is not {api}"
            else:
                assert callable(signatures.resolve(alias)), f"{entry.id}: alias {alias} is not a callable"


@pytest.mark.runtime
@pytest.mark.parametrize("entry", [e for e in ENTRIES if e.rule == "api_value"], ids=lambda e: e.id)
def test_a_value_entry_names_one_value_and_it_is_that_sides_dtype(entry):
    """A dtype's pair: each name is the framework's dtype object, and both sides' are the same width and kind."""
    import mindspore
    import torch

    t, m = signatures.resolve(entry.torch["api"]), signatures.resolve(entry.mindspore["api"])
    assert isinstance(t, torch.dtype), f"{entry.id}: {entry.torch['api']} is not a torch dtype"
    assert isinstance(m, mindspore.dtype.Type), f"{entry.id}: {entry.mindspore['api']} is not a MindSpore dtype"
    made = torch.zeros(2, dtype=t)
    ms_made = mindspore.ops.zeros(2, dtype=m)
    assert made.element_size() == ms_made.itemsize, entry.id
    assert made.dtype.is_floating_point == mindspore.ops.is_floating_point(ms_made), entry.id
    assert str(t).rsplit(".", 1)[1] == str(m).lower(), (str(t), str(m))     # torch.int8 and Int8


@pytest.mark.runtime
def test_the_versions_the_docs_name_are_installed():
    import mindspore
    import torch

    assert torch.__version__.split("+")[0] == docs.VERSIONS["torch"], \
        f"docs name torch {docs.VERSIONS['torch']}, installed is {torch.__version__}"
    assert mindspore.__version__ == docs.VERSIONS["mindspore"], \
        f"docs name MindSpore {docs.VERSIONS['mindspore']}, installed is {mindspore.__version__}"


@pytest.mark.parametrize("entry", ENTRIES, ids=lambda e: e.id)
def test_every_parameter_of_the_source_api_has_a_decision(entry):
    if entry.rule == "method_name":   # forward's parameters are the model's own
        return
    for side in ("torch", "mindspore") if entry.source == "both" else (entry.source,):
        decided = {getattr(p, side) for p in entry.params}
        source = getattr(entry, side)
        missing = [n for n in signatures.names(source["signature"]) if n not in decided]
        assert not missing, f"mappings entry {entry.id}: no param decides what happens to {side}'s {', '.join(missing)}"


def test_drift_names_each_difference():
    def installed_api(a, b=2, *args, c=None, **kw):
        pass

    problems = signatures.drift("f(a, b=3, d=1, *args, **kw)", signatures.installed(installed_api))
    assert "b: recorded default 3, installed default 2" in problems
    assert "d is recorded but the installed signature has no such parameter" in problems
    assert "c (default None) is in the installed signature but not recorded" in problems
    assert signatures.drift("f(a, b=2, *args, c=None, **kw)", signatures.installed(installed_api)) == []
    assert signatures.drift("f(a, *, b=2, **kw)", signatures.installed(lambda a, b=2, **kw: 0)) == \
        ["b: recorded as keyword-only, installed as positional or keyword"]


def test_defaults_compare_by_meaning():
    import enum

    class Impl(enum.Enum):
        NO_REENTRANT = 2

    def noop():
        pass

    def api(x, impl=Impl.NO_REENTRANT, fn=noop, check=lambda _: True, mode="default", eps=1e-5):
        pass

    assert signatures.drift("api(x, impl=Impl.NO_REENTRANT, fn=noop, check=lambda _: True, mode='default', "
                            "eps=0.00001)", signatures.installed(api)) == []
    assert signatures.drift("api(x, impl=Impl.REENTRANT, fn=other, check=None, mode='none', eps=1e-7)",
                            signatures.installed(api)) == [
        "impl: recorded default Impl.REENTRANT, installed default Impl.NO_REENTRANT",
        "fn: recorded default other, installed default noop",
        "check: recorded default None, installed default lambda",
        "mode: recorded default 'none', installed default 'default'",
        "eps: recorded default 1e-07, installed default 1e-05"]
