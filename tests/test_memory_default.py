"""compare() proves the checkpointing by default: wherever either model recomputes, the bytes each side keeps for
backward are judged, and a lost recompute mark fails at the defaults; a pair with none runs no memory check."""
from __future__ import annotations

import pytest

from recompat.compat.compare import compare, run_pair
from test_localise import DEPTH, ms_stack, torch_stack, x_batch

pytestmark = pytest.mark.runtime


@pytest.mark.parametrize("checkpoint", ["non-reentrant", "reentrant"])
def test_a_lost_recompute_mark_fails_at_the_defaults(checkpoint):
    report = compare(torch_stack(checkpoint), ms_stack(recompute=range(DEPTH - 1)), x_batch())
    row = report.row("bytes kept for backward")
    assert not report.passed and not row.passed
    assert f"judged: torch reruns {DEPTH} modules in backward (layers.0, layers.1, layers.2, ..." in row.message
    assert report.meta["localisation"]["memory"]["torch_path"] == f"layers.{DEPTH - 1}"


def test_every_mark_kept_passes_and_says_why_it_was_judged():
    report = compare(torch_stack("non-reentrant"), ms_stack(recompute=range(DEPTH)), x_batch())
    assert report.passed, str(report)
    assert report.meta["memory"]["why"] == (
        f"torch reruns {DEPTH} modules in backward (layers.0, layers.1, layers.2, ... {DEPTH - 3} more) and "
        f"MindSpore marks {DEPTH} cells or operators for recompute (layers.0, layers.1, layers.2, ... {DEPTH - 3} more)")


def test_a_pair_with_no_checkpointing_runs_no_memory_check():
    report = compare(torch_stack(), ms_stack(), x_batch())
    assert report.passed
    assert not [r for r in report.rows if r.kind == "memory"]
    assert report.meta["memory"] == {"skipped": "neither model checkpoints or recomputes: there is no saving to prove"}
    runs = run_pair(torch_stack(), ms_stack(), x_batch())
    assert runs.kept is None


def test_only_the_mindspore_side_recomputing_is_judged_too():
    report = compare(torch_stack(), ms_stack(recompute=[3]), x_batch())
    assert report.row("bytes kept for backward").passed         # MindSpore keeps less: nothing lost
    assert "MindSpore marks 1 cell or operator for recompute (layers.3)" in report.meta["memory"]["why"]


def test_off_by_request_and_graph_mode_say_why_not():
    off = compare(torch_stack("non-reentrant"), ms_stack(), x_batch(), memory=False)
    assert off.passed and off.meta["memory"] == {"skipped": "not asked (memory=False)"}
    graph = compare(torch_stack("non-reentrant"), ms_stack(), x_batch(), ms_mode="graph")
    assert "GRAPH mode" in graph.meta["memory"]["skipped"]


def test_memory_must_be_auto_true_or_false():
    with pytest.raises(ValueError, match="memory must be"):
        compare(torch_stack(), ms_stack(), x_batch(), memory="always")
