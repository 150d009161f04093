"""Preference data: JSONL pairs of answers to one prompt, the first preferred,
in the layouts TRL's DPOTrainer and ORPOTrainer read:

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
from .instruct import IGNORE, _conversation, read_jsonl_objects, to_rows


@dataclass
class Pair:
    chosen: Sample
    rejected: Sample
    where: str  # file:line, for errors found later (the prompt's length)


def read_pairs(path) -> list[tuple[list[dict], list[dict], str]]:
    """(chosen conversation, rejected conversation, file:line) per line; both
    conversations end with the answer, the assistant's turn."""
    pairs = []
    for obj, where in read_jsonl_objects(path):
        if not isinstance(obj, dict):
            raise InputError(f"{where}: expected a JSON object")
        missing = [key for key in ("chosen", "rejected") if key not in obj]
        if missing:
            raise InputError(
                f"{where}: no {' or '.join(repr(k) for k in missing)}: a preference line needs "
                "'chosen' and 'rejected' answers (and a 'prompt')"
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


def pair_rows(pairs: list[Pair], n_pairs: int, t_seq: int, pad_id: int):
    """(ids, positions, labels) int32 [2 n_pairs, t_seq]: rows 2k, 2k + 1 are
    pair k's chosen and rejected answers; missing pairs are padding, every
    label masked."""
    samples = [s for pair in pairs for s in (pair.chosen, pair.rejected)]
    ids, _, labels = to_rows(samples, t_seq, pad_id)
    padding = 2 * n_pairs - len(samples)
    ids = np.vstack([ids, np.full((padding, t_seq), pad_id, dtype=np.int32)])
    labels = np.vstack([labels, np.full((padding, t_seq), IGNORE, dtype=np.int32)])
    return ids, np.tile(np.arange(t_seq, dtype=np.int32), (2 * n_pairs, 1)), labels


def summarize(margins) -> dict[str, float]:
    """The reward margin (mean over pairs of the chosen answer's reward minus
    the rejected one's) and the preference accuracy (the fraction of pairs
    whose chosen answer has the higher reward)."""
    if not len(margins):
        return {"margin": 0.0, "accuracy": 0.0}
    return {"margin": float(np.mean(margins)), "accuracy": float(np.mean(np.asarray(margins) > 0))}
