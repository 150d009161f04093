"""The README and docs/ hold together: the README stays a ten-minute read
with a table of contents that lists every heading, every relative link in the
README and docs/*.md leads to a file (and heading) that exists, every docs page
leads back to the README, the README's test command is what CI runs, and
docs/benchmarks.md is what scripts/make_benchmarks_doc.py writes from
benchmarks/results/ now. (tests/test_readme.py runs the pages' code blocks.)"""

from __future__ import annotations

import re
import subprocess
import sys
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parent.parent
README = REPO / "README.md"
DOCS = REPO / "docs"
MAX_README_LINES = 450

FENCED = re.compile(r"^```.*?^```[ \t]*$", re.S | re.M)
CODE_SPAN = re.compile(r"`[^`\n]*`")
HEADING = re.compile(r"^(#{1,6}) (.+?)\s*$", re.M)
LINK = re.compile(r"\[[^\]\n]*\]\(([^)\s]+)\)")
TOC_ENTRY = re.compile(r"^(?P<indent> *)- \[(?P<text>[^\]]+)\]\(#(?P<anchor>[^)]+)\)$")


def prose(text: str) -> str:
    """The text without its fenced blocks (their lines kept, blank)."""
    return FENCED.sub(lambda m: "\n" * m.group(0).count("\n"), text)


def headings(text: str) -> list[tuple[int, str]]:
    """(level, text) of each heading outside code blocks."""
    return [(len(m[1]), m[2]) for m in HEADING.finditer(prose(text))]


def slug(heading: str) -> str:
    """GitHub's anchor for a heading (before it numbers repeats)."""
    text = re.sub(r"[^\w\- ]", "", heading.strip().lower())
    return text.replace(" ", "-")


def anchors(text: str) -> set[str]:
    """Every anchor a page's headings make, repeats numbered as GitHub numbers them."""
    seen: dict[str, int] = {}
    found = set()
    for _, heading in headings(text):
        base = slug(heading)
        n = seen.get(base, 0)
        seen[base] = n + 1
        found.add(base if n == 0 else f"{base}-{n}")
    return found


def pages() -> list[Path]:
    return [README, *sorted(DOCS.glob("*.md"))]


def relative_links(page: Path) -> list[str]:
    text = CODE_SPAN.sub("", prose(page.read_text(encoding="utf-8")))
    return [t for t in LINK.findall(text) if not re.match(r"[a-z][a-z0-9+.-]*:", t)]


def test_the_readme_is_a_ten_minute_read():
    lines = README.read_text(encoding="utf-8").count("\n")
    assert lines <= MAX_README_LINES, f"README.md has {lines} lines; move detail to a page in docs/"


def test_the_readme_contents_list_every_heading_in_order():
    text = README.read_text(encoding="utf-8")
    start = text.index("**Contents**")
    toc = []
    for line in text[start:].splitlines()[2:]:
        if not line.strip():
            break
        entry = TOC_ENTRY.match(line)
        assert entry, f"not a contents entry: {line!r}"
        toc.append((len(entry["indent"]) // 2 + 2, entry["text"], entry["anchor"]))
    listed = [(level, heading, slug(heading)) for level, heading in headings(text) if level in (2, 3)]
    assert toc == listed, "the README's contents and its ## / ### headings differ"
    assert {anchor for *_, anchor in toc} <= anchors(text)


def test_the_anchor_rule_is_githubs():
    assert slug("Your CPU's level") == "your-cpus-level"
    assert slug("`--precision bf16`") == "--precision-bf16"
    assert slug("toy.finetune: toy-train from Python") == "toyfinetune-toy-train-from-python"
    assert anchors("## A\n\n## A\n```\n## not a heading\n```\n") == {"a", "a-1"}


@pytest.mark.parametrize("page", pages(), ids=lambda page: page.name)
def test_every_relative_link_leads_somewhere(page):
    text = page.read_text(encoding="utf-8")
    broken = []
    for target in relative_links(page):
        path, _, anchor = target.partition("#")
        file = (page.parent / path).resolve() if path else page
        if not file.exists():
            broken.append(f"{target}: no such file")
        elif anchor and file.suffix == ".md" and anchor not in anchors(file.read_text(encoding="utf-8")):
            broken.append(f"{target}: no such heading")
        elif anchor and file.suffix != ".md":
            broken.append(f"{target}: an anchor into a file that is not markdown")
    assert not broken, (page.name, broken)
    assert text.endswith("\n")


def test_the_link_check_finds_a_broken_link(tmp_path):
    page = tmp_path / "page.md"
    page.write_text("# T\n\n[a](missing.md) [b](#t) [c](#nope) `[d](code.md)`\n```\n[e](fenced.md)\n```\n")
    assert relative_links(page) == ["missing.md", "#t", "#nope"]


def test_every_docs_page_leads_back_to_the_readme_and_is_listed_there():
    readme_links = {(REPO / target.partition("#")[0]).resolve() for target in relative_links(README)}
    for page in sorted(DOCS.glob("*.md")):
        lines = page.read_text(encoding="utf-8").splitlines()
        assert page.resolve() in readme_links, f"README.md links to no {page.name}"
        if page.name == "ARCHITECTURE.md":  # the design document, older than the pages
            continue
        assert lines[0].startswith("# "), page.name
        assert "](../README.md)" in "\n".join(lines[1:4]), f"{page.name}: no link back to the README"


def readme_test_command() -> list[str]:
    """The parts of the README's one-line test command."""
    text = README.read_text(encoding="utf-8")
    first = re.search(r"```bash\n(.*?)```", text, re.S)[1].splitlines()
    assert first[0].startswith("pip install . && toy-train "), first[0]
    (line,) = [line for line in first if "python -m pytest" in line]
    return [part.strip() for part in line.split("#", 1)[0].split("&&")]


def test_the_readme_test_command_is_what_ci_runs():
    ci = (REPO / ".ci" / "run").read_text(encoding="utf-8").splitlines()
    begin = next(i for i, line in enumerate(ci) if line.startswith("CMAKE_ARGS="))
    end = next(i for i, line in enumerate(ci) if line.startswith("python -m pytest"))
    steps = [line for line in ci[begin : end + 1] if line and not re.match(r"#|mark |wait ", line)]
    assert readme_test_command() == steps
    install = (DOCS / "install.md").read_text(encoding="utf-8")
    assert [line for line in README.read_text().splitlines() if "python -m pytest -q" in line][0] in install


def test_the_benchmarks_page_is_what_the_script_writes_now(tmp_path):
    out = tmp_path / "benchmarks.md"
    done = subprocess.run(
        [sys.executable, str(REPO / "scripts" / "make_benchmarks_doc.py"), "--out", str(out)],
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert done.returncode == 0, done.stderr
    page = (DOCS / "benchmarks.md").read_text(encoding="utf-8")
    assert page == out.read_text(encoding="utf-8"), "docs/benchmarks.md is stale: python scripts/make_benchmarks_doc.py"


def test_the_benchmarks_page_lists_every_results_file_once():
    page = (DOCS / "benchmarks.md").read_text(encoding="utf-8")
    for result in sorted((REPO / "benchmarks" / "results").glob("*.md")):
        assert page.count(f"](../benchmarks/results/{result.name})") == 1, result.name


def test_the_benchmarks_page_puts_the_newest_first(tmp_path):
    sys.path.insert(0, str(REPO / "scripts"))
    try:
        import make_benchmarks_doc as make
    finally:
        sys.path.pop(0)
    results = tmp_path / "results"
    results.mkdir()
    (results / "bench_x-2026-01-02-amd-epyc-zen4.md").write_text("# newer\n\n| a |\n|---|\n| 1 |\n")
    (results / "bench_x-2026-01-01-amd-epyc-zen4.md").write_text("# older\n\n```\n| in a block |\n```\n")
    (results / "bench_x-2026-01-03-intel-xeon-amx-second.md").write_text("# newest, a Xeon\n")
    page = make.render(make.sittings(results))
    assert page.index("[newest, a Xeon]") < page.index("[newer]") < page.index("[older]")
    assert page.index("### Intel Xeon") < page.index("### AMD EPYC Zen 4")
    assert "| a |\n|---|\n| 1 |" in page and "in a block" not in page
