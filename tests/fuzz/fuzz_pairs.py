"""Preference data as fuzz input: the JSONL file `toy-train dpo` and `orpo`
read with --data -- TRL's {prompt, chosen, rejected} lines as strings or
message lists, or with the prompt left to the answers, and every way a
downloaded file breaks them: keys missing or of the wrong type, empty
answers, answers that do not end with the assistant, prompts that fill the
sequence, other encodings and damaged bytes (fuzz_jsonl's text and
encodings).

Each case trains one step on fuzz_jsonl's tiny chat model: a file that
parses trains, anything else is refused in one line naming the file's line.
"""

from __future__ import annotations

import json

from fuzz.fuzz_jsonl import encode, model, text, value
from fuzz.fuzz_jsonl import line as instruct_line

NAME = "pairs"


def messages(rng, end_with_assistant: bool) -> list:
    turns = [
        {"role": rng.choice(["system", "user", "assistant"]), "content": text(rng)} for _ in range(rng.randint(0, 3))
    ]
    if end_with_assistant:
        turns.append({"role": "assistant", "content": text(rng)})
    return turns


def answer(rng):
    roll = rng.random()
    if roll < 0.6:
        return text(rng)
    if roll < 0.85:
        return messages(rng, rng.random() < 0.8)[-1:] or [{"role": "assistant", "content": text(rng)}]
    return value(rng)


def pair(rng) -> dict:
    roll = rng.random()
    if roll < 0.5:
        prompt = text(rng) if rng.random() < 0.7 else messages(rng, False) + [{"role": "user", "content": text(rng)}]
        return {"prompt": prompt, "chosen": answer(rng), "rejected": answer(rng)}
    if roll < 0.7:  # no prompt: the answers carry the conversation
        shared = [{"role": "user", "content": text(rng)}]
        return {"chosen": shared + messages(rng, True), "rejected": shared + messages(rng, True)}
    # the right keys, values of any type; or keys missing, misnamed, extra
    obj = {
        rng.choice(["prompt", "chosen", "rejected", "messages", "response", "Chosen", ""]): value(rng)
        for _ in range(rng.randint(0, 4))
    }
    if rng.random() < 0.5:
        obj.update({"prompt": text(rng), "chosen": text(rng)})
    return obj


def valid_pair(rng) -> dict:
    return {
        "prompt": text(rng),
        "chosen": rng.choice(["Yes.", "4", text(rng) + "!"]),
        "rejected": rng.choice(["No.", "5", text(rng) + "?"]),
    }


def make_case(rng, workdir):
    # a third of the files hold valid pairs only, so that many cases train
    valid = rng.random() < 0.33
    lines = [
        json.dumps(valid_pair(rng))
        if valid
        else (json.dumps(pair(rng), ensure_ascii=rng.random() < 0.5) if rng.random() < 0.85 else instruct_line(rng))
        for _ in range(rng.randint(1, 6))
    ]
    if rng.random() < 0.6:
        lines.insert(rng.randrange(len(lines) + 1), json.dumps({"prompt": "2+2?", "chosen": "4", "rejected": "5"}))
    data = workdir / "pairs.jsonl"
    data.write_bytes(encode(rng, lines))
    argv = [
        rng.choice(["dpo", "orpo"]),
        "--model",
        str(model()),
        "--data",
        str(data),
        "--steps",
        "1",
        "--seq",
        rng.choice(["16", "96", "160"]),
        "--batch",
        rng.choice(["1", "2"]),
        "--threads",
        "1",
        "--out",
        str(workdir / "run"),
    ]
    if rng.random() < 0.3:
        argv += ["--eval-split", rng.choice(["0.5", "0.9"])]
    return "toy-train", argv
