"""The built-in differential suite as pytest tests: one test per case of recompat.compat.suite.

``recompat test`` runs this file; so does the project's own test suite (tests/test_suite.py imports it). The
recompat pytest plugin parametrizes ``recompat_case`` (its options pick devices and MindSpore modes) and
``recompat_run`` turns each outcome into a pass, a skip with its reason, an xfail for a known difference the
zoo records, or a failure with the tensor rows that differ.
"""
import pytest

pytestmark = pytest.mark.runtime


def test_pair(recompat_case, recompat_run):
    recompat_run(recompat_case)


def test_planted_bug_is_caught(recompat_mutant, recompat_hunt):
    recompat_hunt(recompat_mutant)
