"""Preference data: pairs of answers to one prompt, the first preferred, in
a data file (JSONL, a JSON array, Parquet or Arrow: records.py), in the
layouts TRL's DPOTrainer and ORPOTrainer read:

    {"prompt": "...", "chosen": "...", "rejected": "..."}
    {"prompt": [messages], "chosen": [messages], "rejected": [messages]}   (conversational)
    {"chosen": [messages], "rejected": [messages]}    (the prompt: the turns both share)

Each answer is rendered after the prompt with the model's chat template (as
instruct renders a conversation) and only its tokens carry loss. A line that
cannot be used is a one-line error naming file and line.
"""

from __future__ import annotations

import sys
from dataclasses import dataclass

import numpy as np

from ..core.errors import InputError
from ..text.chat import Sample
from .instruct import _conversation, packed_rows, places
from .records import read_records

# tinynn: a batch of packed rows holds at most this many samples (pairs x 2)
PACKED_SAMPLES = 256


@dataclass
class Pair:
    chosen: Sample
    rejected: Sample
    where: str  # file:line, for errors found later (the prompt's length)


# the names a preference record is read by (--columns maps a file's own to them)
PREFERENCE_NAMES = ("prompt", "chosen", "rejected")


def read_pairs(path, columns: dict[str, str] | None = None) -> list[tuple[list[dict], list[dict], str]]:
    """(chosen conversation, rejected conversation, file:line or row) per
    record of a data file (JSONL, a JSON array, Parquet or Arrow: records.py);
    both conversations end with the answer, the assistant's turn."""
    pairs = []
    for obj, where in read_records(path, columns):
        if not isinstance(obj, dict):
            raise InputError(f"{where}: expected a JSON object")
        missing = [key for key in ("chosen", "rejected") if key not in obj]
        if missing:
            raise InputError(
                f"{where}: no {' or '.join(repr(k) for k in missing)}: a preference record needs "
                "'chosen' and 'rejected' answers (and a 'prompt'); this one has "
                f"{', '.join(map(repr, obj)) or 'nothing'} (--columns names other columns, e.g. chosen=good)"
            )
        prompt = _prompt_messages(obj, where)
        chosen = _with_answer(prompt, obj["chosen"], "chosen", where)
        rejected = _with_answer(prompt, obj["rejected"], "rejected", where)
        pairs.append((chosen, rejected, where))
    return pairs


def _prompt_messages(obj, where: str) -> list[dict]:
    prompt = obj.get("prompt")
    if prompt is None:
        return []  # implicit: both answers carry the whole conversation
    if isinstance(prompt, str):
        if not prompt.strip():
            raise InputError(f"{where}: the prompt is empty")
        return [{"role": "user", "content": prompt}]
    if isinstance(prompt, list) and prompt:
        return _conversation({"messages": prompt + [{"role": "assistant", "content": ""}]}, where)[:-1]
    raise InputError(f"{where}: 'prompt' must be a string or a non-empty list of {{role, content}} messages")


def _with_answer(prompt: list[dict], answer, key: str, where: str) -> list[dict]:
    """The prompt's messages, then the answer as the assistant's turn."""
    if isinstance(answer, str):
        messages = prompt + [{"role": "assistant", "content": answer}]
    elif isinstance(answer, list) and answer:
        messages = _conversation({"messages": prompt + answer}, where)
    else:
        raise InputError(f"{where}: {key!r} must be a string or a non-empty list of {{role, content}} messages")
    if not prompt and len(messages) < 2:
        raise InputError(f"{where}: {key!r} holds no prompt: give a 'prompt' or the user's turn before the answer")
    if messages[-1]["role"] != "assistant":
        raise InputError(f"{where}: the {key} answer must end with the assistant's message")
    if not messages[-1]["content"].strip():
        raise InputError(f"{where}: the {key} answer is empty")
    return messages


def tokenize_pairs(pairs, formatter) -> list[Pair]:
    """Each pair's two conversations as samples whose final answer alone is trained."""
    out = []
    for chosen, rejected, where in pairs:
        samples = []
        for messages in (chosen, rejected):
            sample = formatter.sample(messages)
            answer = np.arange(len(sample.tokens)) >= sample.last_response_start()
            samples.append(Sample(sample.tokens, sample.trained & answer))
        out.append(Pair(samples[0], samples[1], where))
    return out


def fit_pairs(pairs: list[Pair], t_seq: int) -> list[Pair]:
    """Pairs cut to t_seq + 1 tokens: a long answer loses its end (as TRL's
    truncation keeps the start); a prompt that leaves no room for an answer
    is an error naming its line."""
    limit, cut = t_seq + 1, 0
    fitted = []
    for pair in pairs:
        prompt = pair.chosen.last_response_start()
        if prompt >= t_seq or pair.rejected.last_response_start() >= t_seq:
            raise InputError(
                f"{pair.where}: the prompt alone takes {prompt} tokens of --seq {t_seq}, "
                "leaving no room for the answers (give a larger --seq or a shorter prompt)"
            )
        answers = []
        for sample in (pair.chosen, pair.rejected):
            if len(sample.tokens) > limit:
                cut += 1
                sample = Sample(sample.tokens[:limit], sample.trained[:limit])
            answers.append(sample)
        fitted.append(Pair(answers[0], answers[1], pair.where))
    if cut:
        print(f"toy-train: {cut} answers were cut to fit --seq {t_seq}", file=sys.stderr)
    return fitted


def fit_pairs_to_rows(pairs: list[Pair], t_seq: int) -> list[Pair]:
    """Pairs cut so that both answers fit one row of t_seq places, as packed
    rows hold them (fit_pairs first: each answer fits a row alone). Where they
    do not, the longer answer loses its end, down to half a row, then the
    other; a prompt that leaves an answer no room is an error naming its line."""
    cut, fitted = 0, []
    for pair in pairs:
        kept = _room(places(pair.chosen), places(pair.rejected), t_seq)
        answers = []
        for sample, room in zip((pair.chosen, pair.rejected), kept):
            if room < places(sample):
                if sample.last_response_start() >= room:
                    raise InputError(
                        f"{pair.where}: the prompt takes {sample.last_response_start()} tokens, leaving no room in "
                        f"a row of --seq {t_seq} for both answers (give a larger --seq or --packing off)"
                    )
                cut += 1
                sample = Sample(sample.tokens[: room + 1], sample.trained[: room + 1])
            answers.append(sample)
        fitted.append(Pair(answers[0], answers[1], pair.where))
    if cut:
        print(
            f"toy-train: {cut} answers were cut for both of their pair to fit a row of --seq {t_seq}", file=sys.stderr
        )
    return fitted


def pair_places(pair: Pair) -> int:
    """The places a pair takes in a packed row: its two answers one after the other."""
    return places(pair.chosen) + places(pair.rejected)


def _room(chosen: int, rejected: int, t_seq: int) -> tuple[int, int]:
    """The places two answers keep in a row of t_seq: all where they fit;
    else the longer is cut, to no less than half the row, then the other."""
    if chosen + rejected <= t_seq:
        return chosen, rejected
    if chosen >= rejected:
        chosen = max(t_seq // 2, t_seq - rejected)
        return chosen, min(rejected, t_seq - chosen)
    rejected = max(t_seq // 2, t_seq - chosen)
    return min(chosen, t_seq - rejected), rejected


def pair_rows(pairs: list[Pair], t_batch: int, t_seq: int, pad_id: int, packed: bool = False):
    """(ids, positions, labels) int32 [t_batch, t_seq] of the pairs' samples,
    chosen then rejected, each pair's: one a row, or packed, a pair's two
    after each other in one row (the pairs already laid in rows, pack). Rows
    past the samples are padding, every label masked."""
    if packed:
        rows = [[s for pair in row for s in (pair.chosen, pair.rejected)] for row in pairs]
    else:
        rows = [[s] for pair in pairs for s in (pair.chosen, pair.rejected)]
    return packed_rows(rows + [[]] * (t_batch - len(rows)), t_seq, pad_id)


def sample_counts(positions, labels) -> np.ndarray:
    """Each sample's labelled tokens, the samples numbered through the batch
    as tinynn numbers them (tnn_set_objective): a sample begins at each row's
    first token and wherever a position is 0."""
    positions, labels = np.asarray(positions), np.asarray(labels)
    starts = positions == 0
    starts[:, 0] = True
    sample = np.cumsum(starts.ravel()) - 1
    return np.bincount(sample, weights=(labels.ravel() >= 0), minlength=sample[-1] + 1).astype(np.int64)


def real_pairs(counts) -> np.ndarray:
    """Which pairs of a batch hold two labelled samples (the others are padding)."""
    counts = np.asarray(counts)[: len(counts) // 2 * 2]
    return (counts[0::2] > 0) & (counts[1::2] > 0)


def summarize(margins) -> dict[str, float]:
    """The reward margin (mean over pairs of the chosen answer's reward minus
    the rejected one's) and the preference accuracy (the fraction of pairs
    whose chosen answer has the higher reward)."""
    if not len(margins):
        return {"margin": 0.0, "accuracy": 0.0}
    return {"margin": float(np.mean(margins)), "accuracy": float(np.mean(np.asarray(margins) > 0))}
