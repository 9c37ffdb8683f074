"""compare_training counts each side's live tensors over the run: a port whose recompute keeps a tensor of every
step alive (MindSpore 2.10's non-reentrant recompute with early_stop=True) fails its memory row, though every loss
and weight agrees; the faithful port (early_stop=False) passes it; a run too short to judge says so."""
from __future__ import annotations

import pytest
import torch

from recompat.compat import training_cases
from recompat.compat.training import compare_training

pytestmark = pytest.mark.runtime

BLOCKS, STEPS = 2, 10       # training_cases' checkpointed classifier has two recomputed blocks


def _train(early_stop: bool, steps: int = STEPS):
    tm, mm = training_cases._models(early_stop=early_stop)
    return compare_training(tm, mm, training_cases._batches(), steps=steps, loss=torch.nn.CrossEntropyLoss(),
                            optimizer=torch.optim.SGD(tm.parameters(), lr=0.1))


def _row(report):
    (row,) = report.run
    assert row.name == "live tensors per step"
    return row


def test_a_recompute_that_keeps_a_tensor_of_every_step_fails_though_the_values_agree():
    report = _train(early_stop=True)
    assert not report.passed
    assert all(step.passed for step in report.steps), str(report)      # only the memory shows it
    row = _row(report)
    assert not row.passed and "early_stop=False" in row.message, row.message
    counts = report.meta["live"]
    assert counts["MindSpore"][STEPS] - counts["MindSpore"][2] >= BLOCKS * (STEPS - 2)
    assert counts["torch"][STEPS] == counts["torch"][2]
    assert "live tensors per step: FAILED" in str(report)


def test_the_faithful_recompute_passes_the_memory_row():
    report = _train(early_stop=False)
    assert report.passed, str(report)
    assert _row(report).passed
    assert "live tensors per step: torch: " in str(report)


def test_a_run_too_short_to_count_says_it_was_not_judged():
    report = _train(early_stop=True, steps=3)
    row = _row(report)
    assert row.passed and row.message.startswith("not judged: it takes 4 steps or more"), row.message
    assert report.meta["live"] == {"torch": {}, "MindSpore": {}}
