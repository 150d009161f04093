"""Instruction data: JSONL conversations rendered with the model's own chat
template, tokenized with its tokenizer, the loss on the assistant's turns only.

A line is one of the shapes instruction data sets come in:

    {"prompt": ..., "response": ...}                 ("completion" for "response": TRL's)
    {"instruction": ..., "input": ..., "output": ...}  (Alpaca's; "input" may be empty or absent)
    {"messages": [{"role": ..., "content": ...}, ...]}  whose last message is the assistant's

Every assistant
turn of a conversation carries loss; system and user turns, and the template's
text around them, are masked.
"""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np

from ..core.errors import InputError
from ..core.machine import check_fits
from ..text.chat import Sample

IGNORE = -1


def read_jsonl(path) -> list[list[dict]]:
    """Conversations from a JSONL file; a malformed line names file and line."""
    return [_conversation(obj, where) for obj, where in read_jsonl_objects(path)]


def read_jsonl_objects(path) -> list[tuple[object, str]]:
    """Each line's JSON value with its "file:line"; a malformed line names both.

    The file is hostile input (downloaded data sets): lines are split on
    "\n" only -- JSON escapes every other line break, and U+2028/U+2029 are
    text inside a JSON string, not line ends -- each line is decoded as UTF-8
    on its own, and nesting too deep for the JSON parser is refused by line."""
    path = Path(path)
    if not path.is_file():
        raise InputError(f"data file not found: {path} (give an existing --data PATH)")
    # the bytes, their lines and the parsed objects: about three copies of the file at the peak
    check_fits(3 * path.stat().st_size, f"reading {path}", "give a smaller --data file")
    data = path.read_bytes()
    if data.startswith((b"\xff\xfe", b"\xfe\xff")):
        raise InputError(f"{path} is UTF-16 text: save it as UTF-8 (JSON Lines are UTF-8)")
    data = data.removeprefix(b"\xef\xbb\xbf")  # a UTF-8 byte-order mark, as Windows editors write
    objects = []
    for number, raw in enumerate(data.split(b"\n"), start=1):
        where = f"{path}:{number}"
        try:
            line = raw.decode("utf-8")
        except UnicodeDecodeError as err:
            raise InputError(
                f"{where}: not UTF-8 text (byte 0x{raw[err.start]:02x} at column "
                f"{err.start + 1}); save the file as UTF-8"
            ) from None
        if not line.strip():
            continue
        try:
            obj = json.loads(line)
        except json.JSONDecodeError as err:
            raise InputError(f"{where}: not valid JSON ({err.msg} at column {err.colno})") from None
        except RecursionError:
            raise InputError(f"{where}: JSON nested too deeply to read") from None
        objects.append((obj, where))
    if not objects:
        raise InputError(f"{path} holds no samples")
    return objects


def _conversation(obj, where: str) -> list[dict]:
    """The messages of one line's object: {"messages": [...]} or {"prompt", "response"}."""
    if not isinstance(obj, dict):
        raise InputError(f"{where}: expected a JSON object")
    if "messages" in obj:
        messages = obj["messages"]
        if (
            not isinstance(messages, list)
            or not messages
            or not all(
                isinstance(m, dict) and isinstance(m.get("role"), str) and isinstance(m.get("content"), str)
                for m in messages
            )
        ):
            raise InputError(f"{where}: 'messages' must be a list of {{role, content}} strings")
        if messages[-1]["role"] != "assistant":
            raise InputError(f"{where}: the last message must be the assistant's response")
        messages = [{"role": m["role"], "content": m["content"]} for m in messages]
    elif isinstance(obj.get("prompt"), str) and isinstance(obj.get("response", obj.get("completion")), str):
        messages = [
            {"role": "user", "content": obj["prompt"]},
            {"role": "assistant", "content": obj.get("response", obj.get("completion"))},
        ]
    elif (
        isinstance(obj.get("instruction"), str)
        and isinstance(obj.get("output"), str)
        and isinstance(obj.get("input", ""), str)
    ):
        # Alpaca's layout: the input, when there is one, follows the instruction
        request = obj["instruction"] + (f"\n\n{obj['input']}" if obj.get("input") else "")
        messages = [{"role": "user", "content": request}, {"role": "assistant", "content": obj["output"]}]
    else:
        raise InputError(
            f"{where}: expected 'prompt' and 'response' (or 'completion') strings, "
            "'instruction' and 'output', or 'messages'"
        )
    for m in messages:
        for text in (m["role"], m["content"]):
            try:
                text.encode("utf-8")
            except UnicodeEncodeError:  # a lone surrogate escape such as "\ud800"
                raise InputError(
                    f"{where}: a string holds an unpaired surrogate "
                    f"(\\u{ord(text[_first_surrogate(text)]):04x}), which is not text"
                ) from None
    return messages


def _first_surrogate(text: str) -> int:
    return next(i for i, c in enumerate(text) if 0xD800 <= ord(c) <= 0xDFFF)


def fit(sample: Sample, t_seq: int) -> Sample | None:
    """A sample of at most t_seq+1 tokens: the conversation is cut from the
    left when needed; None when its last response alone does not fit."""
    limit = t_seq + 1
    if len(sample.tokens) <= limit:
        return sample
    if len(sample.tokens) - sample.last_response_start() + 1 > limit:
        return None
    cut = len(sample.tokens) - limit
    return Sample(sample.tokens[cut:], sample.trained[cut:])


def to_rows(samples: list[Sample], t_seq: int, pad_id: int):
    """(seq_ids, positions, labels) int32 [len(samples), t_seq]; labels are -1
    where the next token is not the assistant's, and on padding."""
    n = len(samples)
    ids = np.full((n, t_seq), pad_id, dtype=np.int32)
    labels = np.full((n, t_seq), IGNORE, dtype=np.int32)
    for row, s in enumerate(samples):
        length = len(s.tokens) - 1
        ids[row, :length] = s.tokens[:-1]
        # position t predicts token t+1
        labels[row, :length] = np.where(s.trained[1:], s.tokens[1:], IGNORE)
    positions = np.tile(np.arange(t_seq, dtype=np.int32), (n, 1))
    return ids, positions, labels


def split(samples: list, eval_fraction: float, seed: int):
    """A deterministic (train, eval) split; at least one sample is always
    left to train on (a single sample is not held out at all)."""
    order = np.random.default_rng(seed).permutation(len(samples))
    n_eval = min(int(round(eval_fraction * len(samples))), len(samples) - 1)
    if eval_fraction > 0 and len(samples) >= 2:
        n_eval = max(n_eval, 1)
    return [samples[i] for i in order[n_eval:]], [samples[i] for i in order[:n_eval]]
