"""Instruction data: conversations rendered with the model's own chat
template, tokenized with its tokenizer, the loss on the assistant's turns only.

The file is JSON Lines, one JSON array, Parquet or Arrow (records.py). A
record is one of the shapes instruction data sets come in:

    {"prompt": ..., "response": ...}                 ("completion" for "response": TRL's)
    {"instruction": ..., "input": ..., "output": ...}  (Alpaca's; "input" may be empty or absent)
    {"messages": [{"role": ..., "content": ...}, ...]}  whose last message is the assistant's

Every assistant
turn of a conversation carries loss; system and user turns, and the template's
text around them, are masked.
"""

from __future__ import annotations

import bisect
import json

import numpy as np

from ..core.errors import InputError
from ..text.chat import Conversation, Sample
from .records import read_records

IGNORE = -1


# the names a record of instruction data is read by (--columns maps a file's own to them)
INSTRUCT_NAMES = ("messages", "tools", "prompt", "response", "completion", "instruction", "input", "output")


def read_jsonl(path, columns: dict[str, str] | None = None) -> list[Conversation]:
    """Conversations from a data file (JSONL, a JSON array, Parquet or
    Arrow: records.py); a record that is not one names file and line or row."""
    return [_conversation(obj, where) for obj, where in read_records(path, columns)]


def _conversation(obj, where: str) -> Conversation:
    """The messages of one line's object: {"messages": [...], "tools": [...]}
    (tools optional), {"prompt", "response"} or {"instruction", "output"}."""
    if not isinstance(obj, dict):
        raise InputError(f"{where}: expected a JSON object")
    if "messages" in obj:
        messages = [_message(m, where) for m in obj["messages"]] if isinstance(obj["messages"], list) else None
        if not messages:
            raise InputError(f"{where}: 'messages' must be a list of {{role, content}} strings")
        if messages[-1]["role"] != "assistant":
            raise InputError(f"{where}: the last message must be the assistant's response")
        tools = obj.get("tools")
        if tools is not None and not (isinstance(tools, list) and all(isinstance(t, dict) for t in tools)):
            raise InputError(f"{where}: 'tools' must be a list of objects (function schemas, as transformers takes)")
        messages = Conversation(messages, tools)
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
            f"'instruction' and 'output', or 'messages'; this record has {', '.join(map(repr, obj)) or 'nothing'} "
            "(--columns names other columns, e.g. prompt=question,response=answer)"
        )
    conversation = messages if isinstance(messages, Conversation) else Conversation(messages)
    _check_text(conversation, where)
    return conversation


def _message(m, where: str) -> dict:
    """One message as the chat template takes it: role and content strings;
    an assistant's tool_calls ([{"type": "function", "function": {"name",
    "arguments"}}], content then may be null) and a tool message's
    tool_call_id / name, as transformers takes them."""
    if not (isinstance(m, dict) and isinstance(m.get("role"), str)):
        raise InputError(f"{where}: 'messages' must be a list of {{role, content}} strings")
    calls = m.get("tool_calls")
    if calls is not None:
        if m["role"] != "assistant" or not isinstance(calls, list) or not all(_is_call(c) for c in calls):
            raise InputError(
                f"{where}: 'tool_calls' must be an assistant's list of "
                '{"type": "function", "function": {"name": ..., "arguments": {...}}}'
            )
    content = m.get("content")
    if not (isinstance(content, str) or (content is None and calls)):
        raise InputError(f"{where}: 'messages' must be a list of {{role, content}} strings")
    out = {"role": m["role"], "content": content}
    if calls is not None:
        out["tool_calls"] = calls
    for key in ("tool_call_id", "name"):
        if key in m:
            if not isinstance(m[key], str):
                raise InputError(f"{where}: a message's '{key}' must be a string")
            out[key] = m[key]
    return out


def _is_call(call) -> bool:
    function = call.get("function") if isinstance(call, dict) else None
    return (
        isinstance(function, dict)
        and isinstance(function.get("name"), str)
        and isinstance(function.get("arguments"), (dict, str))
    )


def _check_text(conversation: Conversation, where: str) -> None:
    """Every string in it is text: JSON's "\\ud800" escapes are not."""
    try:
        json.dumps([conversation, conversation.tools], ensure_ascii=False).encode("utf-8")
    except UnicodeEncodeError as err:  # a lone surrogate escape such as "\ud800"
        raise InputError(
            f"{where}: a string holds an unpaired surrogate (\\u{ord(err.object[err.start]):04x}), which is not text"
        ) from None


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
    """(seq_ids, positions, labels) int32 [len(samples), t_seq], one sample a
    row; labels are -1 where the next token is not the assistant's, and on padding."""
    return packed_rows([[s] for s in samples], t_seq, pad_id)


def packed_rows(rows: list[list[Sample]], t_seq: int, pad_id: int):
    """(seq_ids, positions, labels) int32 [len(rows), t_seq] of rows holding
    one or more samples each, one after another (pack): each sample's
    positions start at 0, which is how the session knows where it begins;
    the padding after the last one continues its positions."""
    n = len(rows)
    ids = np.full((n, t_seq), pad_id, dtype=np.int32)
    labels = np.full((n, t_seq), IGNORE, dtype=np.int32)
    positions = np.empty((n, t_seq), dtype=np.int32)
    for r, row in enumerate(rows):
        at = 0
        for s in row:
            length = places(s)
            ids[r, at : at + length] = s.tokens[:-1]
            labels[r, at : at + length] = np.where(s.trained[1:], s.tokens[1:], IGNORE)
            positions[r, at : at + length] = np.arange(length, dtype=np.int32)
            at += length
        last_start = at - places(row[-1]) if row else 0
        positions[r, at:] = np.arange(at - last_start, t_seq - last_start, dtype=np.int32)
    return ids, positions, labels


def places(sample: Sample) -> int:
    """The places a sample takes in a row: L tokens fill L-1 (position t predicts token t+1)."""
    return len(sample.tokens) - 1


def pack(sizes: list[int], t_seq: int, most: int | None = None) -> list[list[int]]:
    """Items of these sizes (places, each at most t_seq) in rows of t_seq
    places, as lists of their indices, by best-fit decreasing: largest first,
    each into the fullest row it still fits (and that holds fewer than most
    items), a new row when none has room. Deterministic: ties go to the lower index."""
    order = sorted(range(len(sizes)), key=lambda i: (-sizes[i], i))
    rows: list[list[int]] = []
    rooms: list[tuple[int, int]] = []  # (places left, row), ascending, of rows with room for an item
    for i in order:
        need = sizes[i]
        at = bisect.bisect_left(rooms, (need, -1))
        if at == len(rooms):
            rows.append([i])
            row, room = len(rows) - 1, t_seq - need
        else:
            room, row = rooms.pop(at)
            rows[row].append(i)
            room -= need
        if most is None or len(rows[row]) < most:
            bisect.insort(rooms, (room, row))
    return rows


def split(samples: list, eval_fraction: float, seed: int):
    """A deterministic (train, eval) split; at least one sample is always
    left to train on (a single sample is not held out at all)."""
    order = np.random.default_rng(seed).permutation(len(samples))
    n_eval = min(int(round(eval_fraction * len(samples))), len(samples) - 1)
    if eval_fraction > 0 and len(samples) >= 2:
        n_eval = max(n_eval, 1)
    return [samples[i] for i in order[n_eval:]], [samples[i] for i in order[:n_eval]]
