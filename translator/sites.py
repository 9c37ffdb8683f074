"""Recording what a pass did: its sites and their diagnostics, worded from mappings/diagnostics.yaml."""
from __future__ import annotations

import ast

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
        site.diagnostics.append(Diagnostic(code, spec["status"], site.path, site.line, site.col,
                                           spec["message"].format(**fields)))


def literal_flag(value: ast.AST):
    """True / False for a literal bool argument (None counts as True, both frameworks' default for the reentrancy
    flags); 'dynamic' for anything decided at run time."""
    if isinstance(value, ast.Constant) and value.value in (True, False, None):
        return value.value is not False
    return "dynamic"
