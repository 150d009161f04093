"""Greedy generation speed on SmolLM2-135M (or --model): toy, transformers, llama.cpp.

    python benchmarks/bench_generate.py [--new-tokens N] [--threads N] [--repeats N] [--rounds N]
                                        [--engines toy,transformers,llama.cpp] [--model GGUF]
                                        [--prompt-tokens N]

--model: another GGUF (a random model of bench_scale.py's, kept with
--keep: Qwen3-30B-A3B's shape). One without a tokenizer (tokenizer.ggml.model
"none") gets --prompt-tokens seeded random ids as its prompt, the same for
every engine, and no text; transformers, which needs one, is left out.

Every engine gets the same chat prompt (rendered with the GGUF's own chat
template and tokenized by toy, so the prompt tokens are identical) and
generates greedily. toy runs `toy.generate` on the Q4_1 GGUF as stored;
transformers (when torch and transformers import; loading a GGUF also needs
accelerate) runs `generate` on the same file, which it dequantizes to float32
on load; llama.cpp (when
llama-cpp-python imports) runs `Llama.generate` on the same file. The column
is new tokens per second of generation, the prompt's processing included and
the model's load excluded: each engine loads, generates once to warm up, then
times --repeats generations from an empty cache (load s: loading the model
and its tokenizer; peak RSS: the worker process's own, VmHWM). Each engine runs in its own
process, --rounds times, the engines taking turns; the table gives the best
and the median run. Take the figures on an idle machine: on two shared cores
any other busy process stalls a two-thread run at every barrier (ggml's CPU
threads spin-wait), slowing it several times, so the best run is the one to
compare and the median shows how quiet the machine was.
"""

from __future__ import annotations

import argparse
import json
import statistics
import subprocess
import sys
import time
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).parent))
from side_by_side import peak_rss_mb  # noqa: E402

QUESTION = "Write a story about a robot who learns to paint. Describe the colours it discovers."


def model_path(given: str | None) -> Path:
    from toy.core.models import default_model_path

    return Path(given) if given else default_model_path()


def has_tokenizer(path: Path) -> bool:
    from toy.formats.gguf_file import read_metadata

    kind = read_metadata(path, "model ", until=lambda key, _: key == "tokenizer.ggml.model").get("tokenizer.ggml.model")
    return kind not in (None, "none")


def prompt_ids(path: Path, prompt_tokens: int) -> tuple[str | None, list[int]]:
    """The chat prompt and its ids, or (None, seeded random ids) for a file without a tokenizer."""
    from toy.text.chat import ChatFormatter
    from toy.text.tokenizer import GGUFTokenizer

    if not has_tokenizer(path):
        from toy.native.session import read_gguf_config

        vocab = read_gguf_config(path).vocab
        return None, [int(i) for i in np.random.default_rng(0).integers(0, vocab, prompt_tokens)]
    tokenizer = GGUFTokenizer.from_gguf(path)
    text = ChatFormatter.from_gguf(path, tokenizer).render(
        [{"role": "user", "content": QUESTION}], add_generation_prompt=True
    )
    return text, tokenizer.encode(text)


def timed(fn, repeats: int) -> dict:
    fn(8)  # warm-up: first-call costs are not generation
    seconds, n, text = [], 0, ""
    for _ in range(repeats):
        t0 = time.perf_counter()
        n, text = fn(None)
        seconds.append(time.perf_counter() - t0)
    # the worker's own peak (VmHWM): ru_maxrss carries the parent's, which imported torch
    return {"tokens_per_s": [n / s for s in seconds], "new_tokens": n, "text": text, "peak_rss_mb": peak_rss_mb()}


class NoText:
    """What generate_ids asks of a tokenizer, for a file without one: no end token, no text."""

    end_ids: frozenset = frozenset()

    @staticmethod
    def decode(tokens) -> str:
        return ""


def run_toy(path: Path, prompt: str | None, ids: list[int], new_tokens: int, threads: int, repeats: int) -> dict:
    import toy

    t0 = time.perf_counter()
    model = toy.load_model(path, threads=threads)
    if prompt is None:  # no tokenizer: the same decode loop on the ids (toy-generate's generate_ids)
        from toy.generation.generate import generate_ids

        load_s = time.perf_counter() - t0

        def gen_ids(limit):
            n = limit or new_tokens
            generate_ids(model, NoText, ids, n, (), None, len(ids) + new_tokens + 16, temperature=0.0)
            return n, ""

        return {**timed(gen_ids, repeats), "load_s": load_s}
    toy.generate(model, "Hi", 1)  # reads the tokenizer, kept on the model: part of the load
    load_s = time.perf_counter() - t0
    tokenizer, seen = model.tokenizer, []
    decode = tokenizer.decode

    def counted(tokens):  # generate decodes its output once: the tokens made
        seen.append(len(tokens))
        return decode(tokens)

    tokenizer.decode = counted

    def gen(limit):
        text = toy.generate(model, prompt, limit or new_tokens)
        return seen[-1], text

    return {**timed(gen, repeats), "load_s": load_s}


def run_transformers(path: Path, prompt: str | None, ids: list[int], new_tokens: int, threads: int, repeats: int):
    import torch
    from transformers import AutoModelForCausalLM, AutoTokenizer

    torch.set_num_threads(threads)
    t0 = time.perf_counter()
    model = AutoModelForCausalLM.from_pretrained(
        str(path.parent), gguf_file=path.name, torch_dtype=torch.float32
    ).eval()
    tokenizer = AutoTokenizer.from_pretrained(str(path.parent), gguf_file=path.name)
    load_s = time.perf_counter() - t0
    input_ids = torch.tensor([ids])

    def gen(limit):
        n = limit or new_tokens
        with torch.inference_mode():
            out = model.generate(
                input_ids,
                attention_mask=torch.ones_like(input_ids),
                max_new_tokens=n,
                min_new_tokens=n,
                do_sample=False,
                pad_token_id=tokenizer.eos_token_id,
            )
        new = out[0, len(ids) :].tolist()
        return len(new), tokenizer.decode(new)

    return {**timed(gen, repeats), "load_s": load_s}


def run_llama_cpp(path: Path, prompt: str | None, ids: list[int], new_tokens: int, threads: int, repeats: int):
    import llama_cpp

    t0 = time.perf_counter()
    llm = llama_cpp.Llama(
        str(path),
        n_ctx=len(ids) + new_tokens + 16,
        n_threads=threads,
        n_threads_batch=threads,
        verbose=False,
        seed=0,
    )
    load_s = time.perf_counter() - t0

    def gen(limit):
        llm.reset()  # an empty cache: the prompt is processed every time
        new = []
        for token in llm.generate(ids, temp=0.0, top_k=1, reset=True):
            new.append(token)
            if len(new) == (limit or new_tokens):
                break
        return len(new), "" if prompt is None else llm.detokenize(new).decode("utf-8", errors="replace")

    return {**timed(gen, repeats), "load_s": load_s}


WORKERS = {"toy": run_toy, "transformers": run_transformers, "llama.cpp": run_llama_cpp}


def available() -> list[str]:
    engines = ["toy"]
    try:
        import torch  # noqa: F401
        import transformers  # noqa: F401

        engines.append("transformers")
    except ImportError:
        print("(torch/transformers not installed: transformers column skipped)", file=sys.stderr)
    try:
        import llama_cpp  # noqa: F401

        engines.append("llama.cpp")
    except ImportError:
        print("(llama-cpp-python not installed: llama.cpp column skipped)", file=sys.stderr)
    return engines


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--new-tokens", type=int, default=128)
    p.add_argument("--threads", type=int, default=2)
    p.add_argument("--repeats", type=int, default=3, help="timed generations per process")
    p.add_argument("--rounds", type=int, default=2, help="processes per engine, the engines taking turns")
    p.add_argument("--engines", default=None, help="comma-separated subset of toy,transformers,llama.cpp")
    p.add_argument("--model", default=None, help="a GGUF (default: SmolLM2-135M Q4_1)")
    p.add_argument(
        "--prompt-tokens", type=int, default=64, help="the prompt's length for a file without a tokenizer (default 64)"
    )
    p.add_argument("--worker", choices=tuple(WORKERS))
    args = p.parse_args()
    path = model_path(args.model)
    prompt, ids = prompt_ids(path, args.prompt_tokens)
    if args.worker:
        out = WORKERS[args.worker](path, prompt, ids, args.new_tokens, args.threads, args.repeats)
        print(json.dumps(out))
        return
    engines = args.engines.split(",") if args.engines else available()
    if prompt is None and "transformers" in engines:
        engines.remove("transformers")  # it loads a GGUF with its tokenizer only
    unknown = [e for e in engines if e not in WORKERS]
    if unknown:
        sys.exit(f"bench_generate: unknown engine '{unknown[0]}' (choose from {', '.join(WORKERS)})")
    results: dict[str, dict] = {}
    failed: dict[str, str] = {}
    for _ in range(args.rounds):
        for engine in engines:
            if engine in failed:
                continue
            run = subprocess.run(
                [
                    sys.executable,
                    __file__,
                    "--worker",
                    engine,
                    "--new-tokens",
                    str(args.new_tokens),
                    "--threads",
                    str(args.threads),
                    "--repeats",
                    str(args.repeats),
                    "--prompt-tokens",
                    str(args.prompt_tokens),
                    *(("--model", args.model) if args.model else ()),
                ],
                capture_output=True,
                text=True,
            )
            if run.returncode != 0:
                failed[engine] = (run.stderr.strip().splitlines() or ["no output"])[-1]
                continue
            r = json.loads(run.stdout.strip().splitlines()[-1])
            if engine in results:
                results[engine]["tokens_per_s"] += r["tokens_per_s"]
            else:
                results[engine] = r
    runs = args.rounds * args.repeats
    what = f"{len(ids)}-token chat prompt" if prompt is not None else f"{len(ids)} random prompt tokens"
    print(
        f"greedy generation, {path.name}, {what}, {args.new_tokens} new tokens, "
        f"{args.threads} threads, {runs} runs each"
    )
    print(f"{'engine':<13} {'best tok/s':>10} {'median':>8} {'new tokens':>11} {'load s':>7} {'peak RSS MB':>12}")
    for engine in engines:
        if engine in failed:
            print(f"{engine:<13} failed: {failed[engine]}")
            continue
        r = results[engine]
        print(
            f"{engine:<13} {max(r['tokens_per_s']):>10.1f} {statistics.median(r['tokens_per_s']):>8.1f} "
            f"{r['new_tokens']:>11} {r['load_s']:>7.1f} {r['peak_rss_mb']:>12.0f}"
        )
    if "toy" in results:
        for other in ("llama.cpp", "transformers"):
            if other in results:
                best = max(results["toy"]["tokens_per_s"]) / max(results[other]["tokens_per_s"])
                median = statistics.median(results["toy"]["tokens_per_s"]) / statistics.median(
                    results[other]["tokens_per_s"]
                )
                print(f"toy / {other}: {best:.2f}x best, {median:.2f}x median", flush=True)
    for engine, r in results.items():
        print(f"{engine}: {r['text'][:70]!r}", file=sys.stderr)


if __name__ == "__main__":
    main()
