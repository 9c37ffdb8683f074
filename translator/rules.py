"""The rule registry: where a mapping entry's `rule` finds the code that rewrites its sites.

Each pass keeps one `Rules`: its methods that apply a rule are registered under the rule's name and the kind of
use they handle (a call, a reference, a method call, a def), and the pass dispatches every site through it.
mappings/schema.json lists the rule names an entry may take; tests/test_mappings.py checks that every one has a
handler in the pass for the framework it translates from.
"""
from __future__ import annotations

from typing import Callable


class Rules:
    """One pass's rules: (rule name, kind of use) -> the method that handles it."""

    def __init__(self, pass_name: str):
        self.pass_name = pass_name
        self._handlers: dict[tuple[str, str], Callable] = {}

    def register(self, rule: str, on: str = "call"):
        """Decorator: the method handles uses of kind `on` of entries whose rule is `rule`."""
        def add(method: Callable) -> Callable:
            if (rule, on) in self._handlers:
                raise ValueError(f"{self.pass_name}: rule {rule!r} has two handlers for {on!r}")
            self._handlers[(rule, on)] = method
            return method
        return add

    def handler(self, rule: str, on: str = "call") -> Callable | None:
        """The method for this rule and kind of use; None when the rule does not apply to it."""
        return self._handlers.get((rule, on))

    @property
    def names(self) -> frozenset[str]:
        """Every rule name this pass handles."""
        return frozenset(rule for rule, _ in self._handlers)
