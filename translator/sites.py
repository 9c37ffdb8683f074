"""Recording what a pass did: its sites and their diagnostics, worded from mappings/diagnostics.yaml."""
from __future__ import annotations

import ast
import re

from recompat.translator.results import Diagnostic, Site


class SiteLog:
    """Mixed into each pass. Needs `self.src` (the Source walked), `self.m` (the Mappings) and `self.sites`."""

    def site(self, node: ast.AST, api: str) -> Site:
        """A new site for the use of `api` at `node`."""
        site = Site(self.src.path, node.lineno, self.src.column(node), api)
        self.sites.append(site)
        return site

    def diag(self, site: Site, code: str, **fields) -> None:
        """Add diagnostic `code` to `site`, its message filled with `fields`."""
        spec = self.m.diagnostics[code]
        fields = {k: one_line(v) if isinstance(v, str) else v for k, v in fields.items()}
        site.diagnostics.append(Diagnostic(code, spec["status"], site.path, site.line, site.col,
                                           spec["message"].format(**fields)))


def one_line(text: str, limit: int = 60) -> str:
    """A message field as one line: source quoted from several lines is joined and shortened (a diagnostic is
    one line on stderr); the data's prose is one line already and stays whole."""
    if "\n" not in text:
        return text
    text = re.sub(r"\s+", " ", text).strip()
    return text if len(text) <= limit else text[:limit - 3].rstrip() + "..."


def literal_flag(value: ast.AST):
    """True / False for a literal bool argument (None counts as True, both frameworks' default for the reentrancy
    flags); 'dynamic' for anything decided at run time."""
    if isinstance(value, ast.Constant) and value.value in (True, False, None):
        return value.value is not False
    return "dynamic"
