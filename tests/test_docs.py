"""`recompat docs` as a maintainer and a reader see it: the committed docs/ is what mappings/ generates, --check
names every difference, each entry gets a page in both languages with every parameter of both signatures, new
entries appear by themselves, text from the mappings is escaped, and every paired example prints the same numbers
on both sides (and the page shows them).

Everything here is pure text except the examples, which run torch and MindSpore (marked runtime).
"""
from __future__ import annotations

import os
import re
import shutil
from pathlib import Path

import pytest

from recompat import mappings
from recompat.cli import main
from recompat.compat import prove
from recompat.reports import docs, signatures

ROOT = Path(__file__).resolve().parent.parent
ENTRIES = mappings.default().entries + mappings.default().training     # the training pairs have pages too
# script examples; the core set's: test_model_examples.py. A third-party library's API (`library:`) has none: the
# library is not installed here (its page says so; tests/test_sweep.py checks its signature against its sources)
SCRIPTED = [e for e in ENTRIES if e.rule not in mappings.CORE_RULES + mappings.TRAINING_RULES
            and not e.torch.get("library")]


@pytest.fixture(scope="module")
def built() -> dict[str, str]:
    return {k: v.decode("utf-8") for k, v in docs.build().items()}


def _table(md: str, head: str) -> list[list[str]]:
    """The rows of the Markdown table whose header line is ``head``, split into cells (escaped pipes kept)."""
    lines = md.splitlines()
    start = lines.index(head)
    rows = []
    for line in lines[start + 2:]:
        if not line.startswith("|"):
            break
        cells = re.split(r"(?<!\\)\|", line.strip()[1:-1])
        rows.append([c.strip() for c in cells])
    return rows


# ------------------------------------------------------------------------------------------------ up to date

def test_committed_docs_are_what_the_mappings_generate(capsys):
    code = main(["docs", "--check"])
    out = capsys.readouterr()
    assert code == 0, ("docs/ is out of date with mappings/: run `recompat docs` (after editing an example, "
                       "`recompat prove` first) and commit docs/\n" + out.out + out.err)


def test_check_names_each_difference_and_docs_puts_them_right(tmp_path, capsys):
    out = tmp_path / "docs"
    assert main(["docs", "-o", str(out)]) == 0
    capsys.readouterr()
    assert main(["docs", "--check", "-o", str(out)]) == 0

    page = out / "en" / "checkpoint.md"
    page.write_text(page.read_text(encoding="utf-8").replace("Renamed", "Renamed twice"), encoding="utf-8")
    (out / "zh" / "recompute.html").unlink()
    stale = out / "en" / "gone.md"
    stale.write_text(f"<!-- {docs.MARK} from mappings/ (entry gone) -->\n# gone\n", encoding="utf-8")
    guide = out / "guide.md"
    guide.write_text("# a hand-written guide\n", encoding="utf-8")
    before = {p: p.stat().st_mtime_ns for p in out.rglob("*") if p.is_file()}

    assert main(["docs", "--check", "-o", str(out)]) == 1
    listed = capsys.readouterr()
    assert f"{page}: differs" in listed.out
    assert f"{out / 'zh' / 'recompute.html'}: missing" in listed.out
    assert f"{stale}: generated earlier, but no mapping entry produces it now" in listed.out
    assert "guide.md" not in listed.out
    assert "3 files" in listed.err and "out of date" in listed.err
    assert {p: p.stat().st_mtime_ns for p in out.rglob("*") if p.is_file()} == before, "--check wrote something"

    assert main(["docs", "-o", str(out)]) == 0
    assert not stale.exists(), "a stale generated page is removed"
    assert guide.read_text(encoding="utf-8") == "# a hand-written guide\n", "hand-written files are never touched"
    assert "Renamed twice" not in page.read_text(encoding="utf-8")
    untouched = out / "en" / "index.md"
    assert untouched.stat().st_mtime_ns == before[untouched], "a file that is already right is not rewritten"
    assert main(["docs", "--check", "-o", str(out)]) == 0


def test_docs_into_a_file_is_a_usage_error(tmp_path, capsys):
    target = tmp_path / "docs"
    target.write_text("not a folder")
    assert main(["docs", "-o", str(target)]) == 2
    assert f"{target}: exists and is not a folder" in capsys.readouterr().err


# ------------------------------------------------------------------------------------------------- contents

@pytest.mark.parametrize("lang", docs.LANGS)
def test_every_entry_has_a_page_and_an_index_row_that_links_it(built, lang):
    index_md, index_html = built[f"{lang}/index.md"], built[f"{lang}/index.html"]
    for e in ENTRIES:
        assert f"{lang}/{e.id}.md" in built and f"{lang}/{e.id}.html" in built, e.id
        assert f"]({e.id}.md)" in index_md, f"{lang}/index.md does not link {e.id}"
        assert f'href="{e.id}.html"' in index_html, f"{lang}/index.html does not link {e.id}.html"
    head = docs._TEXT[lang]["index_head"]
    rows = [r for section in index_md.split("\n## ")[1:] if head in section for r in _table(section, head)]
    assert len(rows) == len(ENTRIES)
    assert all(r[2].startswith((docs._TEXT[lang]["consistent"], docs._TEXT[lang]["differs"][:3])) for r in rows)


@pytest.mark.parametrize("entry", ENTRIES, ids=[e.id for e in ENTRIES])
def test_each_page_lists_every_parameter_of_both_signatures_with_the_decision(built, entry):
    for lang in docs.LANGS:
        md = built[f"{lang}/{entry.id}.md"]
        rows = _table(md, docs._TEXT[lang]["head"])
        columns = {"torch": {r[2] for r in rows}, "mindspore": {r[3] for r in rows}}
        for side in ("torch", "mindspore"):
            sig = getattr(entry, side)["signature"]
            assert signatures.pretty(getattr(entry, side)["api"], sig).split("(")[0] in md
            for p in signatures.parse(sig):
                assert docs.md_inline(f"`{p.name}`") in columns[side], f"{lang}/{entry.id}: {side} {p.name} missing"
        for p, row in zip(entry.params, rows):
            assert (row[2], row[3]) == (docs.md_inline(p.torch and f"`{p.torch}`"),
                                        docs.md_inline(p.mindspore and f"`{p.mindspore}`"))
            expected = {"rename": "rename", "drop": "drop"}.get(p.action)
            if expected:
                decision = docs._TEXT[lang]["decision"][expected]
                assert row[4].startswith(f"**{decision}"), f"{lang}/{entry.id}: {p.torch}/{p.mindspore}: {row[4]}"
            if p.code:
                assert p.code in row[4]


def test_checkpoint_page_covers_the_family_and_what_the_harness_found(built):
    en, zh = built["en/checkpoint.md"], built["zh/checkpoint.md"]
    for word in ("use_reentrant", "preserve_rng_state", "save_rng_state", "context_fn", "determinism_check", "debug",
                 "early_stop", "checkpoint_sequential", "mindspore.recompute", "Cell.recompute()",
                 "Primitive.recompute()", "num_batches_tracked", "(2 - momentum)", "nn.Dropout", "RC150"):
        assert word in en, word
        assert word in zh, word
    assert "Random numbers: dropout masks" in en and "BatchNorm statistics are updated twice" in en
    assert "随机数:dropout 掩码" in zh and "BatchNorm 统计量被更新两次" in zh
    assert "](checkpoint_sequential.md)" in en and "](primitive_recompute.md)" in en
    assert "../behaviours.md" in en and "behaviours.html" in built["en/checkpoint.html"]


def test_the_support_code_page_shows_what_the_translation_adds(built):
    entry = mappings.default().entry("checkpoint_sequential")
    code = entry.support_code.replace("{ms}", "mindspore").rstrip()
    assert code in built["en/checkpoint_sequential.md"]
    assert code in prove.example_for("checkpoint_sequential").mindspore_code, \
        "the MindSpore example must use the function the translation adds, unchanged"


def test_mappings_json_is_the_data_the_pages_show(built):
    import json

    doc = json.loads(built["mappings.json"])
    assert doc["kind"] == "recompat-mappings" and doc["versions"] == docs.VERSIONS
    assert [e["id"] for e in doc["entries"]] == [e.id for e in ENTRIES]
    first = doc["entries"][0]
    assert first["pages"] == {"en": f"en/{first['id']}.md", "zh": f"zh/{first['id']}.md"}
    assert first["example"]["output"] in built[f"en/{first['id']}.md"]


def _fetching_tags(text: str) -> list[str]:
    """The tags of a page that would fetch or run something: script, link, and any element with a src (code on the
    page that reads `src=` is text, not a tag)."""
    from html.parser import HTMLParser

    found = []

    class Tags(HTMLParser):
        def handle_starttag(self, tag, attrs):
            if tag in ("script", "link") or any(name == "src" for name, _ in attrs):
                found.append(tag)

    Tags().feed(text)
    return found


def test_html_pages_are_self_contained_and_link_html_twins(built):
    for path, text in built.items():
        if not path.endswith(".html"):
            continue
        assert not _fetching_tags(text), path
        assert "http-equiv=\"Content-Security-Policy\"" in text, path
        for href in re.findall(r'href="([^"]+)"', text):
            assert not href.startswith(("http:", "https:")), f"{path}: external link {href}"
            target = href.split("#")[0]
            assert not target.endswith(".md"), f"{path}: links the Markdown {href}, not its .html twin"
            resolved = os.path.normpath(os.path.join(os.path.dirname(path), target))
            assert resolved in built or (ROOT / "docs" / resolved).is_file(), f"{path}: dead link {href}"


def test_md_inline_shows_text_as_written():
    assert docs.md_inline("m.__call__ and **kwargs <b>x</b> [a](b)") == \
        r"m.\_\_call\_\_ and \*\*kwargs \<b\>x\</b\> \[a\](b)"
    assert docs.md_inline("checkpoint_sequential and `use_reentrant=False`") == \
        "checkpoint_sequential and `use_reentrant=False`"


def test_a_new_entry_appears_with_its_text_escaped(tmp_path):
    folder = tmp_path / "mappings"
    folder.mkdir()
    for p in mappings.HERE.glob("*.yaml"):
        shutil.copy(p, folder / p.name)
    (folder / "zz_new.yaml").write_text('''\
entries:
  - id: zz_new_api
    source: mindspore
    rule: checkpoint_call
    mindspore:
      api: mindspore.new_recompute
      signature: "new_recompute(block, *, keep=1)"
    torch:
      api: torch.utils.checkpoint.checkpoint
      signature: "checkpoint(function, *args, use_reentrant=None)"
    summary:
      en: "A <script>alert(1)</script> entry | with a pipe and **stars**."
      zh: "新的 <b>条目</b>。"
    params:
      - mindspore: block
        torch: function
        action: keep
        note: {en: "The block.", zh: "块。"}
      - mindspore: keep
        torch: null
        action: drop
        code: RC112
        why: "nothing to keep"
        note: {en: "No counterpart.", zh: "无对应参数。"}
''', encoding="utf-8")
    files = {k: v.decode("utf-8") for k, v in docs.build(mappings_folder=folder).items()}
    for lang in docs.LANGS:
        md = files[f"{lang}/zz_new_api.md"]
        assert "](zz_new_api.md)" in files[f"{lang}/index.md"]
        assert "mappings/examples/zz_new_api/torch_example.py" in md, "a missing example is named, not skipped"
        rows = _table(md, docs._TEXT[lang]["head"])
        assert [r[3] for r in rows][:2] == ["`block`", "`keep`"] and "`*args`" in {r[2] for r in rows}
    html = files["en/zz_new_api.html"]
    assert "&lt;script&gt;alert(1)&lt;/script&gt;" in html and "<script>" not in html
    assert "**stars**" in html, "Markdown in mapping text shows as written"
    assert r"\<script\>" in files["en/zz_new_api.md"]


# ------------------------------------------------------------------------------- names reported, not translated

def _html_text(text: str) -> str:
    """Text as markdown-it writes it into HTML (`code` spans included)."""
    escaped = text.replace("&", "&amp;").replace("<", "&lt;").replace(">", "&gt;").replace('"', "&quot;")
    return re.sub(r"`([^`]*)`", r"<code>\1</code>", escaped)


def _reported_yaml_copy(tmp_path, extra: str | None = None, without_reported: bool = False) -> Path:
    folder = tmp_path / "mappings"
    folder.mkdir()
    for p in mappings.HERE.glob("*.yaml"):
        if not (without_reported and p.name == "reported.yaml"):
            shutil.copy(p, folder / p.name)
    if extra:
        (folder / "zz_reported.yaml").write_text(extra, encoding="utf-8")
    return folder


@pytest.mark.parametrize("lang", docs.LANGS)
def test_every_reported_name_is_shown_with_what_it_is_and_what_to_write_instead(built, lang):
    reported = mappings.default().reported
    assert reported, "mappings/reported.yaml lists names"
    md, html = built[f"{lang}/reported.md"], built[f"{lang}/reported.html"]
    title = docs._TEXT[lang]["reported_title"]
    assert md.splitlines()[1] == f"# {title}"
    assert f"## {title}" in built[f"{lang}/index.md"] and "](reported.md)" in built[f"{lang}/index.md"]
    assert 'href="reported.html"' in built[f"{lang}/index.html"]
    assert f"]({lang}/reported.md)" in built["index.md"]
    rows = [r for section in md.split("\n### ")[1:] for r in _table(section, docs._TEXT[lang]["reported_head"])]
    assert len(rows) == len(reported)
    for r, row in zip(reported, rows):
        assert row[0].startswith(f"`{r.api}`") and all(f"`{a}`" in row[0] for a in r.aliases), r.api
        assert row[2] == docs.md_inline(r.what[lang]) and row[3] == docs.md_inline(r.instead[lang]), r.api
        assert _html_text(r.what[lang]) in html and _html_text(r.instead[lang]) in html, r.api
        assert f"<code>{r.api}</code>" in html
    assert "RC160" in md and "RC161" in md, "the page says which codes the translator reports"
    deepspeed = next(r for r in reported if r.library == "DeepSpeed")
    section = md.split("\n### DeepSpeed\n")[1].split("\n### ")[0]
    assert f"`{deepspeed.api}`" in section, "rows are grouped by library"


def test_mappings_json_holds_the_reported_names(built):
    import json

    doc = json.loads(built["mappings.json"])
    assert [(r["api"], r["framework"], r["library"], r["kind"]) for r in doc["reported"]] == \
        [(r.api, r.framework, r.library, r.kind) for r in mappings.default().reported]
    first = doc["reported"][0]
    assert set(first["what"]) == set(first["instead"]) == set(docs.LANGS)
    assert all(r["codes"] == ["RC160", "RC161"] for r in doc["reported"] if r["framework"] == "torch")


def test_a_new_reported_name_appears_without_code_changes(tmp_path):
    folder = _reported_yaml_copy(tmp_path, extra='''\
reported:
  - api: lightning.fabric.zz_checkpoint
    aliases: [lightning.fabric.zz_checkpoint_alias]
    framework: torch
    library: Lightning Fabric
    kind: function
    what: {en: "a <new> torch_name with **kwargs", zh: "新的 <检查点> 函数"}
    instead: {en: "write `mindspore.recompute(block, *args)` | by hand", zh: "改写为 mindspore.recompute(block, *args)"}
  - api: mindspore.zz_recompute_helper
    framework: mindspore
    library: MindSpore
    kind: function
    what: {en: "MindSpore's new helper", zh: "MindSpore 的新辅助函数"}
    instead: {en: "port it to torch.utils.checkpoint by hand", zh: "请手工迁移到 torch.utils.checkpoint"}
''')
    files = {k: v.decode("utf-8") for k, v in docs.build(mappings_folder=folder).items()}
    for lang in docs.LANGS:
        md = files[f"{lang}/reported.md"]
        fabric = md.split("\n### Lightning Fabric\n")[1].split("\n##")[0]
        row = _table(fabric, docs._TEXT[lang]["reported_head"])[0]
        assert row[0].startswith("`lightning.fabric.zz_checkpoint`") and "`lightning.fabric.zz_checkpoint_alias`" in row[0]
        assert row[1] == docs._TEXT[lang]["kinds"]["function"]
        assert row[2] == docs.md_inline({"en": "a <new> torch_name with **kwargs", "zh": "新的 <检查点> 函数"}[lang])
        mindspore_part = md.split("\n## MindSpore\n")[1]
        assert "\n### MindSpore\n" in mindspore_part and "`mindspore.zz_recompute_helper`" in mindspore_part
        assert "`mindspore.zz_recompute_helper`" not in md.split("\n## MindSpore\n")[0], "grouped by framework"
        assert "Lightning Fabric" in files[f"{lang}/index.md"]
    en = files["en/reported.md"]
    assert r"a \<new\> torch_name with \*\*kwargs" in en and r"`mindspore.recompute(block, *args)` \| by hand" in en
    html = files["en/reported.html"]
    assert "a &lt;new&gt; torch_name with **kwargs" in html and "<new>" not in html
    import json

    names = [r["api"] for r in json.loads(files["mappings.json"])["reported"]]
    assert names[-2:] == ["lightning.fabric.zz_checkpoint", "mindspore.zz_recompute_helper"]


def test_no_reported_names_means_no_page_and_no_link(tmp_path):
    files = {k: v.decode("utf-8") for k, v in docs.build(mappings_folder=_reported_yaml_copy(
        tmp_path, without_reported=True)).items()}
    assert not any("reported." in path for path in files)
    assert all("reported.md" not in files[page] for page in ("index.md", "en/index.md", "zh/index.md"))


# ------------------------------------------------------------------------------------------------- examples

@pytest.mark.runtime
@pytest.mark.parametrize("entry", SCRIPTED, ids=[e.id for e in SCRIPTED])
def test_paired_example_prints_the_same_numbers_on_both_sides(built, entry):
    ex = prove.example_for(entry.id)
    assert ex is not None, (f"{entry.id}: no paired example — add mappings/examples/{entry.id}/torch_example.py and "
                            "mindspore_example.py, then run `recompat prove`")
    torch_api, ms_api = entry.torch["api"].rsplit(".", 1)[-1], entry.mindspore["api"].rsplit(".", 1)[-1]
    assert torch_api in ex.torch_code and ms_api in ex.mindspore_code, "each side uses the entry's API"
    printed_torch = prove.run_example(ex.torch_path)
    printed_ms = prove.run_example(ex.mindspore_path)
    assert re.match(r"loss -?\d+\.\d{4}\ngrad x( -?\d+\.\d{4})+\ngrad norms( \d+\.\d{4})+\n$", printed_torch), \
        printed_torch
    assert printed_torch == printed_ms, f"{entry.id}: the two sides differ:\n{printed_torch}\nvs\n{printed_ms}"
    assert ex.output == printed_torch, (f"{ex.output_path} is not what the examples print: run "
                                        "`recompat prove` and commit")
    for lang in docs.LANGS:
        assert printed_torch.rstrip() in built[f"{lang}/{entry.id}.md"]


def test_a_third_party_entry_page_says_why_it_has_no_example(built):
    third_party = [e for e in ENTRIES if e.torch.get("library")]
    assert third_party
    for e in third_party:
        for lang in docs.LANGS:
            page = built[f"{lang}/{e.id}.md"]
            assert e.torch["library"] in page and "tests/cases/" in page, (lang, e.id)


def test_a_training_pair_page_says_compare_training_builds_it_and_shows_the_proof(built):
    for lang in docs.LANGS:
        t = docs._TEXT[lang]
        md = built[f"{lang}/optim_adam.md"]
        assert "compare_training" in md and "recompat translate --scope model" in md   # both read the entry
        assert t["training_intro"] in md and (ROOT / "mappings/examples/optim_adam/output.txt").read_text() in md
        assert "](optim_adamw.md)" in md and "](optim_sgd.md)" in md and "](loss_mse.md)" not in md   # related
        index = built[f"{lang}/index.md"]
        section = index.split(f"## {t['training_group']}")[1]
        assert "](optim_adam.md)" in section and "](clip_grad_norm.md)" in section and "](checkpoint.md)" not in section
