"""The built-in differential suite (checks a-d for every zoo pair, and the planted bugs it must catch), collected
with the project's tests."""
from recompat.builtin_tests import test_pair, test_planted_bug_is_caught  # noqa: F401  (collected here)
