"""Single-file HTML reports, rendered with jinja2 (autoescape on) from the JSON a run writes.

    from recompat.reports import html
    page = html.render(doc, source="suite.json")       # doc: the parsed JSON
    html.write(doc, "suite.html", source="suite.json")

Four kinds, told apart by the JSON itself (:func:`kind_of`):

* translation -- ``recompat translate --json`` (``--report`` adds each changed file's diff): per file and site the
  status, the diagnostics and the diff; totals and the conversion rate.
* suite -- ``recompat test --json`` (``--report`` adds a depth sweep of bytes kept): pair x device x mode x check,
  with errors, tolerances, memory and time; failures expanded, passes collapsed; a small SVG plot.
* mappings -- ``docs/mappings.json`` (written by ``recompat docs``): the index of mapping entries with a filter.
* demo -- ``out/demo/report.json`` (written by ``recompat demo``): per example model translated? ran? agrees with
  torch?, the APIs by occurrence, and the translation's files, sites and diffs.

The page needs nothing outside itself: CSS and script are inline, the plot is inline SVG, and a
Content-Security-Policy forbids every fetch, so it opens the same offline, from a mail attachment or a CI artifact.
Everything taken from the JSON is escaped by jinja2; the only script is ours (allowed by its hash), so markup
smuggled into a file name or a message cannot run even if it were not escaped.
"""
from __future__ import annotations

import base64
import functools
import hashlib
import math
from pathlib import Path

from recompat.constants import SUITE_CHECKS, TRAINING_PARTED

from ._io import ReportError, write_atomic

TEMPLATES = Path(__file__).parent / "templates"
KINDS = ("translation", "suite", "mappings", "demo", "table", "job")
_SITE_RANK = {"error": 0, "manual": 1, "partial": 2, "converted": 3, "unchanged": 4}
_CASE_RANK = {"failed": 0, "missed": 0, "known": 1, "skipped": 2, "passed": 3, "caught": 3}
_MODEL_RANK = {"failed": 0, "mismatch": 1, "not-translated": 2, "agree": 3}


def kind_of(doc: dict) -> str | None:
    """translation, suite, mappings, demo or table; None for JSON that no recompat command writes."""
    kind = doc.get("kind")
    if kind == "recompat-suite":
        return "suite"
    if kind == "recompat-demo":
        return "demo"
    if kind == "recompat-mappings":
        return "mappings"
    if kind == "recompat-table":
        return "table"
    if kind == "recompat-job":
        return "job"
    if kind == "recompat-translate" or (doc.get("tool") == "recompat" and "files" in doc and "summary" in doc):
        return "translation"
    return None


@functools.lru_cache(maxsize=1)
def _env():
    import jinja2

    return jinja2.Environment(loader=jinja2.FileSystemLoader(str(TEMPLATES)), autoescape=True,
                              undefined=jinja2.StrictUndefined, trim_blocks=False, keep_trailing_newline=True)


def render(doc: dict, *, source: str = "JSON") -> str:
    """The HTML page for ``doc``. ReportError when the JSON is not one a recompat command writes."""
    from markupsafe import Markup

    from recompat import __version__

    kind = kind_of(doc)
    if kind is None:
        raise ReportError(f"{source}: not a recompat JSON — expected what `recompat translate --json`, "
                          "`recompat test --json`, `recompat docs` (docs/mappings.json, docs/table.json), "
                          "`recompat verify-table --json`, `recompat job --json` or `recompat demo` (out/demo/report.json) "
                          "writes")
    try:
        model, title = {"translation": _translation, "suite": _suite, "mappings": _mappings, "demo": _demo,
                        "table": _table, "job": _job}[kind](doc)
    except (KeyError, TypeError, AttributeError, ValueError) as exc:
        raise ReportError(f"{source}: a {kind} JSON without the fields its report needs "
                          f"({type(exc).__name__}: {exc}) — write it again with this recompat") from None
    js = (TEMPLATES / "report.js").read_text(encoding="utf-8")
    digest = base64.b64encode(hashlib.sha256(js.encode("utf-8")).digest()).decode("ascii")
    env = _env()
    return env.get_template(f"{kind}.html").render(
        m=model, title=title, source=source, version=__version__, script_hash=f"sha256-{digest}",
        css=Markup((TEMPLATES / "report.css").read_text(encoding="utf-8")), js=Markup(js))


def write(doc: dict, path: str | Path, *, source: str = "JSON") -> Path:
    """Render ``doc`` and write the page to ``path`` atomically."""
    page = render(doc, source=source)
    write_atomic(path, page)
    return Path(path)


# ------------------------------------------------------------------------------------------------ translation

def _diff_lines(text: str | None) -> list[tuple[str, str]]:
    out = []
    for line in (text or "").splitlines():
        if line.startswith(("+++", "---")):
            cls = "meta"
        elif line.startswith("@@"):
            cls = "hunk"
        elif line.startswith("+"):
            cls = "add"
        elif line.startswith("-"):
            cls = "del"
        elif line.startswith("\\"):
            cls = "meta"
        else:
            cls = "ctx"
        out.append((cls, line or " "))
    return out


def _pct(x) -> str:
    return "n/a" if x is None else f"{100 * x:.1f}%"


def _translation(doc: dict):
    s = doc["summary"]
    args = doc.get("arguments") or {}
    sites_total = s["sites"]
    files = []
    for f in doc["files"]:
        sites = [dict(line=x["line"], col=x["col"], api=x["api"], status=x["status"],
                      diagnostics=[dict(code=d["code"], status=d["status"], message=d["message"])
                                   for d in x.get("diagnostics", ())]) for x in f.get("sites", ())]
        statuses = {x["status"] for x in sites}
        if f.get("error"):
            worst = "error"
        else:
            worst = next((k for k in ("manual", "partial", "converted") if k in statuses), "unchanged")
        tags = sorted(statuses | ({"error"} if f.get("error") else set()) | ({"changed"} if f.get("changed") else set()))
        counts = ", ".join(f"{sum(x['status'] == k for x in sites)} {k}" for k in ("converted", "partial", "manual")
                           if any(x["status"] == k for x in sites))
        files.append(dict(path=f["path"], changed=bool(f.get("changed")), error=f.get("error"), sites=sites,
                          notes=f.get("notes") or [], diff=_diff_lines(f.get("diff")), worst=worst,
                          rank=_SITE_RANK[worst], tags=" ".join(tags) or "unchanged", counts=counts))
    cards = [("files scanned", f"{s['files_scanned']:,}"), ("examined", f"{s['files_examined']:,}"),
             ("changed", f"{s['files_changed']:,}"), ("failed", f"{s['files_failed']:,}"),
             ("sites", f"{sites_total.get('total', 0):,}")]
    cards += [(k, f"{sites_total.get(k, 0):,}") for k in ("converted", "partial", "manual")]
    cards += [("conversion rate", _pct(s.get("conversion_rate"))), ("rewritten", _pct(s.get("rewritten_rate"))),
              ("lines", f"{s.get('lines', 0):,}"), ("seconds", f"{s.get('elapsed_s', 0):.2f}")]
    verdicts = ("will not run", "may not run", "runs")   # worst first (translator/verdicts.py)
    classes = sorted((dict(c, tag=c["verdict"].replace(" ", "-"), rank=verdicts.index(c["verdict"]))
                      for c in doc.get("classes") or () if c.get("verdict") in verdicts),
                     key=lambda c: (c["rank"], c["path"], c["line"]))
    for label, key in (("classes will run", "runs"), ("may not run", "may not run"), ("will not run", "will not run")):
        if classes:
            cards.append((label, f"{sum(c['verdict'] == key for c in classes):,}"))
    paths = args.get("paths") or []
    model = dict(cards=cards, files=files, statuses=["converted", "partial", "manual", "error", "changed"],
                 classes=classes, verdicts=[v.replace(" ", "-") for v in verdicts],
                 paths=" ".join(paths) if isinstance(paths, list) else str(paths),
                 to=args.get("to", "?"), mode=args.get("mode", "?"), exit_code=doc.get("exit_code", "?"),
                 expand_diffs=len(files) <= 20)
    return model, "recompat translation report"


# ------------------------------------------------------------------------------------------------------ suite

def _num(x, spec=".3g") -> str:
    if x is None:
        return ""
    if isinstance(x, str):
        return x
    return format(x, spec)


def _suite(doc: dict):
    from_check = SUITE_CHECKS
    statuses = ["passed", "failed", "known", "skipped"]
    results = doc["results"]
    cases, hunts, memory, selective, graph = [], [], [], [], []
    for r in results:
        if r.get("check") == "planted-bug":
            hunts.append(dict(variant=r.get("variant", ""), pair=r.get("pair", ""), status=r["status"],
                              description=r.get("description", ""), message=r.get("message", "")))
            continue
        report = r.get("report") or {}
        rows = []
        errs = []
        training = r.get("check") == "training"
        for row in (_training_rows(report) if training else report.get("rows") or ()):
            e = row.get("max_abs_err")
            if isinstance(e, (int, float)):
                errs.append(e)
            shape = row.get("expected_shape")
            rows.append(dict(name=row.get("name", ""), kind=row.get("kind", ""),
                             shape="" if shape is None else "x".join(map(str, shape)) or "scalar",
                             max_abs_err=_num(e), max_rel_err=_num(row.get("max_rel_err")),
                             cosine=_num(row.get("cosine"), ".6f"), within=_num(row.get("within"), ".4f"),
                             rtol=_num(row.get("rtol")), atol=_num(row.get("atol")),
                             result="passed" if row.get("passed") else "failed", message=row.get("message", "")))
        meta = report.get("meta") or {}
        tolerance = f"rtol {_num(meta['rtol'])}, atol {_num(meta['atol'])}" if "rtol" in meta and "atol" in meta else ""
        figures = r.get("figures") or {}
        message = r.get("message") or ""
        head, _, rest = message.partition("\n")
        err = max(errs) if errs else None
        case = dict(id=r.get("id", ""), pair=r.get("pair", ""), check=r.get("check", ""), variant=r.get("variant", ""),
                    device=r.get("device", ""), ms_mode=r.get("ms_mode", ""), status=r["status"],
                    rank=_CASE_RANK.get(r["status"], 9), message_head=head or r["status"], message_rest=rest,
                    err=_num(err), err_value="" if err is None else repr(float(err)),
                    tolerance=tolerance, seconds=r.get("seconds", ""), rows=rows,
                    localisation=_localisation(meta),
                    weights=(meta.get("weights") or {}).get("judged", "") if isinstance(meta.get("weights"), dict)
                    else "",
                    curves=_curves(report) if training else None,
                    figures=[(k, _num(v) if isinstance(v, float) else v) for k, v in figures.items()
                             if k != "measure"])
        cases.append(case)
        for side in ("torch", "mindspore"):        # the selective check: three figures per framework
            f = figures.get(side) if isinstance(figures.get(side), dict) else None
            if f and {"plain_bytes", "full_bytes", "policy_bytes"} <= set(f):
                plain, full, policy = (int(f[k]) for k in ("plain_bytes", "full_bytes", "policy_bytes"))
                saved = ", ".join(f"{op} x{n}" for op, n in (f.get("saved") or {}).items() if n)
                selective.append(dict(pair=case["pair"], framework=side, plain=plain, full=full, policy=policy,
                                      ratio=f"{policy / plain:.3f}" if plain else "", ratio_value=policy / plain if plain
                                      else "", saved=saved, status=case["status"]))
        if case["check"] == "graph-recompute" and isinstance(figures.get("recomputed"), dict):
            graph.append(dict(pair=case["pair"], form=case["variant"], status=case["status"],
                              ops=figures.get("ops", 0), regions=", ".join(figures.get("checkpointed") or ()),
                              missing=", ".join(figures.get("missing") or ()),
                              tree=_scope_tree(figures["recomputed"])))
        if "plain_bytes" in figures and "recompute_bytes" in figures:
            plain, rec = int(figures["plain_bytes"]), int(figures["recompute_bytes"])
            ratio, over = figures.get("ratio"), figures.get("time_overhead")
            memory.append(dict(pair=case["pair"], form=f"{figures.get('framework', '?')}:{figures.get('form', '?')}",
                               plain=plain, rec=rec, saved=plain - rec, status=case["status"],
                               ratio=f"{ratio:.2f}" if ratio else "", ratio_value=ratio or "",
                               time=f"{over:.2f}" if over else "", time_value=over or ""))
    groups = {}
    for c in cases:
        if c["check"] in from_check:
            groups.setdefault((c["pair"], c["check"]), []).append(c["status"])
    totals = {k: sum(c["status"] == k for c in cases) for k in statuses}
    cards = [(k, totals[k], k) for k in statuses] + [("cases", len(cases), None)]
    catch = ""
    if hunts:
        caught = sum(h["status"] == "caught" for h in hunts)
        catch = f"{caught} of {len(hunts)} planted bugs caught ({100 * caught / len(hunts):.0f}%)"
        cards.append(("planted bugs caught", f"{caught}/{len(hunts)}", None))
    meta = doc.get("meta") or {}
    model = dict(
        results=results, cards=cards, cases=cases, hunts=hunts, memory=memory, selective=selective, graph=graph,
        catch_rate=catch,
        statuses=statuses, checks=sorted({c["check"] for c in cases}), devices=sorted({c["device"] for c in cases}),
        groups=[dict(pair=p, check=k, counts=[v.count(s) for s in statuses]) for (p, k), v in sorted(groups.items())],
        plot=_plot(doc.get("depth_sweep")), machine=meta.get("machine", ""))
    return model, "recompat differential report"


def _scope_tree(by_scope: dict) -> str:
    """Recomputed operators by scope as an indented tree: one line per cell, its own operators beside it."""
    def counted(ops):
        counts: dict[str, int] = {}
        for op in ops:
            counts[op] = counts.get(op, 0) + 1
        return ", ".join(f"{op} x{n}" if n > 1 else op for op, n in counts.items())

    lines, shown = [], set()
    for scope in sorted(by_scope, key=lambda s: s.split(".") if s else []):
        parts = scope.split(".") if scope else []
        for depth in range(1, len(parts)):               # the enclosing cells not shown yet
            if tuple(parts[:depth]) not in shown:
                shown.add(tuple(parts[:depth]))
                lines.append("  " * (depth - 1) + parts[depth - 1])
        shown.add(tuple(parts))
        name = parts[-1] if parts else "(top)"
        lines.append("  " * max(len(parts) - 1, 0) + f"{name}: {counted(by_scope[scope])}")
    return "\n".join(lines)


def _training_rows(report: dict) -> list[dict]:
    """A training result's rows to show: the setup's, then those out of tolerance at the first step that failed
    (named with their step); the curves show the rest."""
    rows = list(report.get("setup") or ())
    first = next((s for s in report.get("steps") or () if not s.get("passed", True)), None)
    if first:
        rows += [{**row, "name": f"step {first['step']}: {row.get('name', '')}"} for row in first.get("rows") or ()]
    return rows


_COLORS = {"torch": "#ee4c2c", "mindspore": "#0969da"}


def _plot(sweep: dict | None):
    """Inline-SVG geometry for bytes kept vs depth, one line per framework and variant; None without data."""
    if not sweep or not sweep.get("points"):
        return None
    points = sweep["points"]
    width, height, left, right, top, bottom = 640, 300, 70, 620, 12, 262
    depths = sorted({p["depth"] for p in points})
    top_bytes = max(max(p["plain_bytes"], p["recompute_bytes"]) for p in points) or 1
    step = 10 ** math.floor(math.log10(top_bytes))
    for m in (1, 2, 5, 10):
        if top_bytes <= m * step * 5:
            tick = m * step
            break
    y_max = tick * math.ceil(top_bytes / tick)
    d_min, d_max = min(depths), max(depths)

    def x(d):
        return round(left + (right - left) * ((d - d_min) / (d_max - d_min) if d_max > d_min else 0.5), 1)

    def y(b):
        return round(bottom - (bottom - top) * b / y_max, 1)

    def human(b):
        for unit, size in (("MB", 1e6), ("kB", 1e3)):
            if b >= size:
                return f"{b / size:g} {unit}"
        return f"{b:g} B"

    series = []
    # Equal bytes in both frameworks draw one line over the other: the first is wide and pale beneath.
    for n, fw in enumerate(sorted({p["framework"] for p in points}, key=lambda f: (f != "torch", f))):
        mine = sorted((p for p in points if p["framework"] == fw), key=lambda p: p["depth"])
        for key, label, dash in (("plain_bytes", "plain", False), ("recompute_bytes", "with recompute", True)):
            dots = [(x(p["depth"]), y(p[key]), f"{fw}, {label}, depth {p['depth']}: {p[key]:,} bytes") for p in mine]
            series.append(dict(label=f"{fw} {label}", color=_COLORS.get(fw, "#6e7781"), dash=dash, dots=dots,
                               stroke=5 if n == 0 else 2, opacity=0.45 if n == 0 else 1,
                               points=" ".join(f"{a},{b}" for a, b, _ in dots)))
    caption = sweep.get("caption", "")
    by_fw: dict = {}
    for p in points:
        by_fw.setdefault(p["framework"], []).append((p["depth"], p["plain_bytes"], p["recompute_bytes"]))
    if len(by_fw) > 1 and len({tuple(sorted(v)) for v in by_fw.values()}) == 1:
        caption += " The frameworks keep the same bytes at every depth: their lines coincide."
    n_ticks = int(round(y_max / tick))
    return dict(width=width, height=height, left=left, right=right, top=top, bottom=bottom, series=series,
                xticks=[(x(d), str(d)) for d in depths],
                yticks=[(y(i * tick), human(i * tick)) for i in range(n_ticks + 1)],
                caption=caption)


_CURVE_COLORS = {"torch": _COLORS["torch"], "MindSpore": _COLORS["mindspore"]}


def _curves(training: dict | None):
    """Inline-SVG geometry for a model's training: each side's loss per step (the float64 reference dashed
    beneath) and MindSpore's divergence from torch per step (log scale); None without training."""
    if not training or not training.get("loss"):
        return None
    width, height, left, right, top, bottom = 560, 170, 56, 540, 10, 138
    losses = {side: values for side, values in training["loss"].items() if values}
    steps = max(len(v) for v in losses.values())

    def x(k):        # step k (1-based)
        return round(left + (right - left) * ((k - 1) / (steps - 1) if steps > 1 else 0.5), 1)

    def scale(lo, hi):
        if not (math.isfinite(lo) and math.isfinite(hi)):
            return lambda v: bottom
        span = (hi - lo) or abs(hi) or 1.0
        return lambda v: round(bottom - (bottom - top) * ((v - lo) / span if math.isfinite(v) else 0), 1)

    finite = [v for vs in losses.values() for v in vs if math.isfinite(v)] or [0.0]
    lo, hi = min(finite), max(finite)
    y = scale(lo, hi)
    series = []
    for side, values in sorted(losses.items(), key=lambda kv: ("reference" not in kv[0], kv[0] != "torch")):
        reference = "reference" in side
        series.append(dict(label=side, color="#6e7781" if reference else _CURVE_COLORS.get(side, "#6e7781"),
                           dash=reference, stroke=5 if reference else 2, opacity=0.45 if reference else 1,
                           points=" ".join(f"{x(k)},{y(v)}" for k, v in enumerate(values, 1)),
                           dots=[(x(k), y(v), f"{side}, step {k}: loss {v:.7g}") for k, v in enumerate(values, 1)]))
    loss = dict(series=series, yticks=[(y(lo), f"{lo:.4g}"), (y(hi), f"{hi:.4g}")], label="loss")
    div = [max(float(d), 1e-12) for d in training.get("divergence") or ()]
    divergence = None
    if div:
        logs = [math.log10(d) for d in div]
        lo_e, hi_e = math.floor(min(logs)), math.ceil(max(logs))
        hi_e = max(hi_e, lo_e + 1)
        yd = scale(lo_e, hi_e)
        dots = [(x(k), yd(math.log10(d)), f"step {k}: divergence {d:.3g}") for k, d in enumerate(div, 1)]
        divergence = dict(series=[dict(label="MindSpore vs torch", color=_COLORS["mindspore"], dash=False, stroke=2,
                                       opacity=1, points=" ".join(f"{a},{b}" for a, b, _ in dots), dots=dots)],
                          yticks=[(yd(e), f"1e{e}") for e in range(lo_e, hi_e + 1)], label="divergence")
    first = training.get("first_failure")
    return dict(width=width, height=height, left=left, right=right, top=top, bottom=bottom, loss=loss,
                divergence_color=_COLORS["mindspore"],
                divergence=divergence, xticks=[(x(k), str(k)) for k in sorted({1, steps, *([first] if first else [])})],
                failure=x(first) if first else None, steps=steps)


# --------------------------------------------------------------------------------------------------- mappings

def _mappings(doc: dict):
    entries = []
    for e in doc["entries"]:
        entries.append(dict(
            torch_api=e["torch"]["api"], mindspore_api=e["mindspore"]["api"],
            torch_signature=e["torch"]["signature"], mindspore_signature=e["mindspore"]["signature"],
            direction=e["direction"], verdict="consistent" if e["consistent"] else "differs",
            description=e["description"]["en"].removeprefix("Differs: "), summary=e["summary"]["en"],
            summary_zh=e["summary"]["zh"],
            params=[dict(torch=p["torch"] or "", mindspore=p["mindspore"] or "", decision=p["decision"]["en"],
                         difference=p["difference"]["en"]) for p in e["params"]],
            output=(e.get("example") or {}).get("output") or ""))
    names = {"torch": "torch", "mindspore": "MindSpore"}
    versions = ", ".join(f"{names.get(k, k)} {v}" for k, v in (doc.get("versions") or {}).items())
    return dict(entries=entries, versions=versions, directions=sorted({e["direction"] for e in entries})), \
        "recompat mappings: PyTorch and MindSpore API differences"


# ------------------------------------------------------------------------------------------------------ table

# the verdicts of `recompat verify-table`, in the order the page sorts them (what a reader looks for first)
_TABLE_RANK = {"differs": 0, "no kernel": 1, "missing": 2, "not probed": 3, "agrees": 4, "out of scope": 5}
_TABLE_BADGE = {"agrees": "agree", "differs": "differs", "no kernel": "failed", "missing": "failed",
                "not probed": "skipped", "out of scope": "skipped"}


def _table(doc: dict):
    from recompat.compat.table import dtype_outcomes

    rows = []
    for r in doc["rows"]:
        error = r.get("max_error")
        rows.append(dict(section=r["section"], torch_api=r["torch_api"], mindspore_api=r["mindspore_api"] or "-",
                         official=r["official"], verdict=r["verdict"], rank=_TABLE_RANK[r["verdict"]],
                         badge=_TABLE_BADGE[r["verdict"]],
                         reason="; ".join(filter(None, [r["reason"], dtype_outcomes(r.get("dtypes") or {})])),
                         tried="\n".join(r.get("tried") or ()),
                         max_error=_num(error) if error else "", open=r["verdict"] == "differs"))
    counts = doc["summary"]
    in_scope = len(rows) - counts.get("out of scope", 0)
    decided = in_scope - counts.get("not probed", 0)
    coverage = f"a verdict for {decided} of {in_scope} rows in scope: " + ", ".join(
        f"{n} {k}" for k, n in counts.items() if n)
    return dict(rows=rows, coverage=coverage, sections=list(dict.fromkeys(r["section"] for r in rows)),
                verdicts=[k for k in _TABLE_RANK if counts.get(k)]), \
        "recompat verify-table: MindSpore's PyTorch API mapping table, run"


# ------------------------------------------------------------------------------------------------------- demo

def _localisation(meta: dict) -> dict | None:
    """compare()'s localisation (compat.localise), as the localisation macro draws it; None without one."""
    loc = meta.get("localisation")
    if not loc:
        return None
    return dict(lines=loc.get("lines") or [], tree=loc.get("tree") or [],
                first=any(m.get("first") for m in loc.get("tree") or ()))


def _compare_rows(report: dict | None) -> list[dict]:
    rows = []
    for row in (report or {}).get("rows") or ():
        shape = row.get("expected_shape")
        rows.append(dict(name=row.get("name", ""), kind=row.get("kind", ""),
                         shape="" if shape is None else "x".join(map(str, shape)) or "scalar",
                         max_abs_err=_num(row.get("max_abs_err")), max_rel_err=_num(row.get("max_rel_err")),
                         cosine=_num(row.get("cosine"), ".6f"), within=_num(row.get("within"), ".4f"),
                         rtol=_num(row.get("rtol")), atol=_num(row.get("atol")),
                         result="passed" if row.get("passed") else "failed", message=row.get("message", "")))
    # failures first: they are what the reader came for
    return sorted(rows, key=lambda r: r["result"] == "passed")


def _training_line(t: dict | None) -> str:
    if not t:
        return ""
    where = f"; first out at step {t['first_failure']}" if t.get("first_failure") else ""
    if t.get("parted_at"):
        where += f"; {TRAINING_PARTED.format(step=t['parted_at'])}"
    elif t.get("torch_far_from"):
        where += (f"; from step {t['torch_far_from']} torch's own float32 is the side far from the float64 run (the "
                  "divergence there is torch's round-off, amplified by training)")
    return (f"{t['steps']} training steps ({', '.join((t.get('pieces') or {}).values())}): "
            f"{t['steps'] - t.get('failed_steps', 0)} of {t['steps']} within the tolerance, judged by "
            f"{t.get('verdict', '?')}{where}")


def _job(doc: dict):
    runs = [dict(side=side, script=r["script"], steps=r["steps"], seconds=r["seconds"], error=r["error"],
                 output=r["output"], models=", ".join(r["models"]) or "none")
            for side, r in doc["runs"].items()]
    status = "passed" if doc["passed"] else "failed"
    model = dict(torch_script=doc["torch_script"], mindspore_script=doc["mindspore_script"], steps=doc["steps"],
                 verdict=doc["verdict"], status=status, runs=runs, rows=_compare_rows(doc), curves=_curves(doc["training"]),
                 failed=sum(not r.get("passed") for r in doc["rows"]))
    script = doc["torch_script"] if doc.get("to", "mindspore") == "mindspore" else doc["mindspore_script"]
    return model, f"recompat job: {Path(script).name} — {status}"


def _demo(doc: dict):
    settings, totals = doc["settings"], doc["totals"]
    kinds = tuple(settings.get("judged") or ("output", "input-grad", "param-grad"))
    models = []
    for r in doc["models"]:
        cells = []
        for k in kinds:
            e = (r.get("errors") or {}).get(k)
            err = None if not e else e.get("max_abs_err")
            cells.append((k, dict(passed=None if not e else bool(e.get("passed")), err=_num(err),
                                  value="" if err is None else repr(float(err)))))
        note = f"judged by {r['verdict']}" if r.get("verdict") and r["verdict"] != settings.get("verdict") else ""
        kept = r.get("memory") or {}
        memory = "; ".join(f"{label} {kept[f]['recompute']:,} with recompute, "
                           + (f"{kept[f]['plain']:,} without" if kept[f].get("plain") is not None else
                              "not measured without")
                           for f, label in (("torch", "torch"), ("mindspore", "MindSpore")) if f in kept)
        status = r["status"]
        headline = {"agree": "outputs and gradients agree", "mismatch": "outputs or gradients differ",
                    "failed": f"failed at {r.get('stage') or '?'}",
                    "not-translated": "not run: the translation says it will not run"}.get(status, status)
        translated = "yes" if r.get("translated") else (f"no ({r['manual']} manual)" if r.get("manual") else "no")
        models.append(dict(name=r["name"], form=r.get("form", ""), translated=translated, ran=bool(r.get("ran")),
                           status=status, rank=_MODEL_RANK.get(status, 9), stage=r.get("stage", ""),
                           seconds=r.get("seconds", ""), reason=r.get("reason", ""), headline=headline,
                           files=r.get("files") or [], warnings=r.get("warnings") or [], buffers=note,
                           memory=f"bytes kept for backward: {memory}" if memory else "",
                           cells=cells, rows=_compare_rows(r.get("compare")), curves=_curves(r.get("training")),
                           training=_training_line(r.get("training"))))
    apis = [dict(a, tags=" ".join(k for k in ("converted", "partial", "manual") if a.get(k))) for a in doc["apis"]]
    translation, _ = _translation(doc["translation"])
    cards = [("models", totals["models"], None)]
    cards += [(k, totals[k], k) for k in ("agree", "mismatch", "failed", "not-translated")]
    cards += [("API occurrences", f"{totals['sites'].get('total', 0):,}", None),
              ("conversion rate", _pct(totals.get("conversion_rate")), None)]
    note = ""
    if totals.get("not-translated"):
        one = totals["not-translated"] == 1
        note = (f"{totals['not-translated']} of {totals['models']} models {'is' if one else 'are'} not yet "
                f"convertible: the translation says {'it' if one else 'each'} will not run (a manual site in what "
                "it builds or runs: an API outside the core set, or a mapping without a passing paired example). "
                "Each model's row names the first reason and its place; the APIs table says which APIs.")
    versions = doc.get("versions") or {}
    model = dict(cards=cards, note=note, models=models, kinds=kinds, statuses=list(_MODEL_RANK), apis=apis,
                 translation=translation, source=doc.get("source", "?"), output=doc.get("output", "?"),
                 scope=settings.get("scope", "?"), seconds=doc.get("seconds", "?"),
                 torch=versions.get("torch", "?"), mindspore=versions.get("mindspore", "?"),
                 verdict=settings.get("verdict")
                 or f"rtol {_num(settings.get('rtol'))}, atol {_num(settings.get('atol'))}")
    return model, "recompat demo: the example project translated, run and compared"
