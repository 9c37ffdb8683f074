"""What recompat shows people: HTML reports rendered from the JSON a run writes, and the API-difference docs.

* :mod:`recompat.reports.html` -- single-file HTML reports (translation, differential suite, mappings), jinja2 with
  autoescape, from JSON; ``recompat report JSON -o FILE.html`` and ``--report FILE.html`` on translate and test.
* :mod:`recompat.reports.docs` -- ``recompat docs``: one page per mapping entry (English and Chinese, Markdown
  and HTML) and the index, generated from mappings/ into docs/.
* :mod:`recompat.reports.signatures` -- recorded signatures and their drift from the installed frameworks.
* :mod:`recompat.reports.sweep` -- bytes kept for backward vs depth, for the differential report's plot.

Importing this package imports neither torch nor MindSpore.
"""
from ._io import ReportError, load_json, write_atomic

__all__ = ["ReportError", "load_json", "write_atomic"]
