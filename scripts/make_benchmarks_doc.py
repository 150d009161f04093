"""Write docs/benchmarks.md: an index of benchmarks/results/*.md.

Each results file is one sitting of a benchmark on one kind of CPU, named
`<bench>-<YYYY-MM-DD>-<cpu>[-<which>].md` (a file named otherwise takes its date
from its first heading and its CPU from its first lines). The page groups them
by benchmark, then by CPU kind, newest first, and gives each its date, CPU, first
heading and a link to the file, with the file's first table outside code blocks
(its summary, where it has one): open for the newest sitting of each group,
folded for the older ones.

    python scripts/make_benchmarks_doc.py            # writes docs/benchmarks.md
    python scripts/make_benchmarks_doc.py --out X    # writes X instead (the test compares the two)

tests/test_docs.py fails when docs/benchmarks.md is not what this script writes
now: run it after adding or changing a results file, and commit its output.
"""

from __future__ import annotations

import argparse
import re
import sys
from dataclasses import dataclass
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
RESULTS = REPO / "benchmarks" / "results"
OUT = REPO / "docs" / "benchmarks.md"

# benchmark (the file name's first part) -> the group's heading; others are shown by name
BENCHES = {
    "bench_lora": "bench_lora: LoRA against PEFT",
    "bench_lora_bf16": "bench_lora --precision bf16: LoRA in bfloat16 against PEFT's autocast",
    "bench_bf16": "bf16: LoRA and full training under --precision bf16",
    "bench_scale": "bench_scale: big models at long context",
    "bench_qwen35": "bench_qwen35: Qwen 3.5 LoRA against PEFT",
    "bench_drift": "bench_drift: how far bf16's losses drift from f32's",
    "bench_corpus": "bench_corpus: tokenizing a big corpus",
    "bench_packing": "bench_packing: packing instruct's rows",
    "bench_preference": "bench_preference: DPO against TRL",
    "defaults_study": "defaults_study: instruct's defaults on made-up facts",
    "cpu_levels": "cpu_levels: every CPU level against PyTorch's bf16 autocast",
    "side_by_side": "side by side: training, LoRA and generation against PyTorch and llama.cpp",
    "bench_generate": "bench_generate: greedy generation against llama.cpp",
}
# files named before the pattern was kept
ALIASES = {"preference": "bench_preference"}

# the CPU part of a name (its longest known prefix) -> the CPU kind: as a
# group's heading, and as an entry's line says it
CPUS = {
    "intel-xeon-amx": ("Intel Xeon with AMX (Sapphire Rapids class)", "Intel Xeon, AMX"),
    "amd-epyc-zen4": ("AMD EPYC Zen 4 (AVX512-BF16, no AMX)", "AMD EPYC Zen 4"),
    "amd-epyc-zen3": ("AMD EPYC Zen 3 (AVX2 only)", "AMD EPYC Zen 3"),
    "amd-epyc": ("AMD EPYC (generation not recorded)", "AMD EPYC"),
    "dev-machine": ("the 2-core development machine (CPU not recorded)", "development machine"),
}
# what a file's first lines say of its CPU, where its name says less: the first found
CPU_TEXT = (
    ("Zen 4", "amd-epyc-zen4"),
    ("Zen 3", "amd-epyc-zen3"),
    ("AMD EPYC", "amd-epyc"),
    ("Xeon", "intel-xeon-amx"),
)

NAME = re.compile(r"(?P<bench>[a-z0-9_]+)-(?P<date>\d{4}-\d{2}-\d{2})-(?P<rest>.+)")
DATE = re.compile(r"\d{4}-\d{2}-\d{2}")
MAX_ROWS = 16  # a longer first table is left in its file

HEADER = """\
# Benchmarks

[Back to the README](../README.md)

Every sitting of every benchmark, as measured: toy side by side with PyTorch,
PEFT, TRL and llama.cpp on an idle machine, 2 threads. The raw output of each
sitting is a file in [benchmarks/results/](../benchmarks/results/); this page
is their index, grouped by benchmark and CPU kind, newest first, with each
file's summary table where it has one (the older sittings' folded). Read a
table's ratios within its sitting: the machines moved by up to a third between
runs of one command, and PyTorch's figures moved as much as toy's between
sittings.

This page is written by `python scripts/make_benchmarks_doc.py` from those files
(do not edit it by hand; `tests/test_docs.py` fails when it is out of date).
A new sitting is a new file, `benchmarks/results/<bench>-<YYYY-MM-DD>-<cpu>.md`:
the commands, the machine (`lscpu`'s model name and flags), the build, the raw
output, and what was concluded.

## Running them

<!-- readme-test: skip (benchmarks: minutes each, with PyTorch; run by hand on an idle machine) -->
```bash
pip install torch==2.13.0 transformers peft   # optional: adds the PyTorch (+ PEFT) columns
python benchmarks/bench_train.py              # full training, toy vs PyTorch
python benchmarks/bench_lora.py               # LoRA r8 (q,v and all seven) on SmolLM2 Q4_1 vs PyTorch + PEFT
python benchmarks/bench_lora.py --model my.gguf --batches 1   # ... on your own GGUF
python benchmarks/make_random_llama.py 1b.gguf  # a random 1.04 B llama (Q4_0, 585 MB) for --model
python benchmarks/profile_step.py lora        # where a training step's time goes, by op
python benchmarks/bench_generate.py           # greedy generation: toy vs transformers (+ accelerate) vs llama.cpp
python benchmarks/bench_wheel.py --wheel-python VENV/bin/python   # the portable wheel vs this native build
python benchmarks/bench_lora.py --torch-bf16  # adds PEFT under torch.autocast("cpu", bfloat16)
python benchmarks/bench_lora.py --cpu-level avx2 --targets q,v --python VENV/bin/python
                                              # both sides held to AVX2: toy's kernels and (a portable
                                              # install's) ggml at haswell, PyTorch's ATen, MKL and oneDNN
python benchmarks/bench_train.py --precision bf16 --torch-bf16   # toy --precision bf16 vs autocast
bash benchmarks/cpu_levels.sh PORTABLE/bin/python   # the CPU-level sitting (cpu_levels below) in one go
pip install trl datasets accelerate           # optional: adds TRL's DPOTrainer
python benchmarks/bench_preference.py         # a DPO step: toy vs TRL's DPOTrainer + PEFT
python benchmarks/bench_scale.py --sizes 1b,8b --seqs 1024,4096 --no-torch   # big models, long context
python benchmarks/bench_qwen35.py             # Qwen 3.5 LoRA (0.8 B widths, 4 of 24 layers; --layers 24: all) vs PEFT
python benchmarks/bench_attention.py          # one layer's attention, forward + backward: toy's kernels vs SDPA
python benchmarks/bench_drift.py              # 100 LoRA steps: how far bf16's losses drift from f32's, toy and PEFT
```

Also here: `benchmarks/bench_kernels.py` (toy's kernels against OpenBLAS, GFLOP/s),
`bench_corpus.py`, `bench_packing.py`, `bench_memory.py` (a step must not leak),
`bench_mpi.py`, `bench_devices.py` (lavapipe against the CPU) and
`defaults_study.py` (instruct's defaults on the fact sets of `make_fact_sets.py`).
"""


@dataclass
class Sitting:
    path: Path
    bench: str
    date: str
    cpu: str  # a key of CPUS, or the name's own CPU part
    title: str
    table: list[str]  # the first table outside code blocks ([] when none, or too long)
    table_rows: int


def first_heading(lines: list[str]) -> str:
    for line in lines:
        if line.startswith("#"):
            return line.lstrip("#").strip()
    return ""


def first_table(lines: list[str]) -> list[str]:
    fenced, table = False, []
    for line in lines:
        if line.startswith("```"):
            fenced = not fenced
            if table:
                break
            continue
        if not fenced and line.startswith("|"):
            table.append(line.rstrip())
        elif table:
            break
    return table


def cpu_kind(rest: str, lines: list[str]) -> str:
    named = next((key for key in sorted(CPUS, key=len, reverse=True) if rest == key or rest.startswith(key + "-")), "")
    if named and named != "amd-epyc":  # a generation the name leaves out may be in the text
        return named
    head = "\n".join(lines[:12])
    for text, key in CPU_TEXT:
        if text in head and (not named or key.startswith(named)):
            return key
    return named or rest


def read(path: Path) -> Sitting:
    lines = path.read_text(encoding="utf-8").splitlines()
    title = first_heading(lines) or path.stem
    m = NAME.fullmatch(path.stem)
    if m:
        bench, date, rest = m["bench"], m["date"], m["rest"]
    else:
        found = DATE.search(title) or DATE.search("\n".join(lines[:12]))
        bench, date, rest = path.stem, found.group(0) if found else "undated", ""
    bench = ALIASES.get(bench, bench)
    table = first_table(lines)
    rows = max(len(table) - 2, 0)
    return Sitting(path, bench, date, cpu_kind(rest, lines), title, table if rows <= MAX_ROWS else [], rows)


def sittings(results: Path) -> list[Sitting]:
    return [read(path) for path in sorted(results.glob("*.md"))]


def newest_first(items: list[Sitting]) -> list[Sitting]:
    # the same day: a summary first, then the name that sorts last (a "-second" before its first sitting)
    return sorted(items, key=lambda s: (s.date, s.path.stem.endswith("-summary"), s.path.stem), reverse=True)


def anchor(heading: str) -> str:
    """GitHub's anchor for a heading that is unique on its page."""
    text = re.sub(r"[^\w\- ]", "", heading.strip().lower())
    return text.replace(" ", "-")


def entry(s: Sitting, link_base: str, folded: bool) -> list[str]:
    cpu = CPUS[s.cpu][1] if s.cpu in CPUS else s.cpu or "CPU not recorded"
    out = [f"**{s.date}**, {cpu}: [{s.title}]({link_base}{s.path.name})", ""]
    if s.table:
        if folded:
            out += ["<details><summary>its first table</summary>", "", *s.table, "", "</details>", ""]
        else:
            out += [*s.table, ""]
    elif s.table_rows:
        out += [f"(its first table has {s.table_rows} rows: see the file)", ""]
    return out


def render(items: list[Sitting], link_base: str = "../benchmarks/results/") -> str:
    groups: dict[str, list[Sitting]] = {}
    for s in items:
        groups.setdefault(s.bench, []).append(s)
    order = sorted(groups, key=lambda b: (max(s.date for s in groups[b]), b), reverse=True)
    out = [HEADER, "## Contents", ""]
    for bench in order:
        title = BENCHES.get(bench, bench)
        out.append(f"- [{title}](#{anchor(title)}) ({len(groups[bench])})")
    out.append("")
    for bench in order:
        out += [f"## {BENCHES.get(bench, bench)}", ""]
        kinds: dict[str, list[Sitting]] = {}
        for s in newest_first(groups[bench]):
            kinds.setdefault(s.cpu, []).append(s)
        for kind, these in kinds.items():  # in order of each kind's newest sitting
            out += [f"### {CPUS[kind][0] if kind in CPUS else kind or 'CPU not recorded'}", ""]
            for i, s in enumerate(these):
                out += entry(s, link_base, folded=i > 0)
    return "\n".join(out).rstrip("\n") + "\n"


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--results", type=Path, default=RESULTS, help="the results folder (benchmarks/results)")
    parser.add_argument("--out", type=Path, default=OUT, help="where to write the page (docs/benchmarks.md)")
    args = parser.parse_args(argv)
    items = sittings(args.results)
    if not items:
        print(f"make_benchmarks_doc: error: no *.md in {args.results}", file=sys.stderr)
        return 2
    args.out.write_text(render(items), encoding="utf-8")
    print(f"make_benchmarks_doc: {len(items)} sittings -> {args.out}", file=sys.stderr)
    return 0


if __name__ == "__main__":
    sys.exit(main())
