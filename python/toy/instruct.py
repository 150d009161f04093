"""Instruction data: JSONL conversations rendered with the model's own chat
template, tokenized with its tokenizer, the loss on the response only.

A line is {"prompt": ..., "response": ...} or {"messages": [{"role": ...,
"content": ...}, ...]} whose last message is the assistant's response.
"""
from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from .corpus import InputError
from .gguf_file import read_gguf

IGNORE = -1


@dataclass
class Sample:
    tokens: np.ndarray     # int32, prompt + response
    n_prompt: int          # the first n_prompt tokens carry no loss


def read_jsonl(path) -> list[list[dict]]:
    """Conversations from a JSONL file; a malformed line names file and line."""
    path = Path(path)
    if not path.is_file():
        raise InputError(f"data file not found: {path} (give an existing --data PATH)")
    conversations = []
    for number, line in enumerate(path.read_text(encoding="utf-8").splitlines(), start=1):
        if not line.strip():
            continue
        where = f"{path}:{number}"
        try:
            obj = json.loads(line)
        except json.JSONDecodeError as err:
            raise InputError(f"{where}: not valid JSON ({err.msg})") from None
        if not isinstance(obj, dict):
            raise InputError(f"{where}: expected a JSON object")
        if "messages" in obj:
            messages = obj["messages"]
            if (not isinstance(messages, list) or not messages or
                    not all(isinstance(m, dict) and isinstance(m.get("role"), str) and
                            isinstance(m.get("content"), str) for m in messages)):
                raise InputError(f"{where}: 'messages' must be a list of {{role, content}} strings")
            if messages[-1]["role"] != "assistant":
                raise InputError(f"{where}: the last message must be the assistant's response")
        elif isinstance(obj.get("prompt"), str) and isinstance(obj.get("response"), str):
            messages = [{"role": "user", "content": obj["prompt"]},
                        {"role": "assistant", "content": obj["response"]}]
        else:
            raise InputError(f"{where}: expected 'prompt' and 'response' strings, or 'messages'")
        conversations.append(messages)
    if not conversations:
        raise InputError(f"{path} holds no samples")
    return conversations


class ChatFormatter:
    """Renders conversations with a GGUF's tokenizer.chat_template (Jinja)."""

    def __init__(self, template: str, tokenizer):
        import jinja2
        from jinja2.sandbox import ImmutableSandboxedEnvironment

        try:
            self.template = ImmutableSandboxedEnvironment(trim_blocks=False).from_string(template)
        except jinja2.TemplateError as err:
            raise InputError(f"the model's chat template does not parse: {err}") from None
        self.tokenizer = tokenizer

    @classmethod
    def from_gguf(cls, path, tokenizer) -> "ChatFormatter":
        field = read_gguf(path).fields.get("tokenizer.chat_template")
        if field is None:
            raise InputError(f"{path} has no tokenizer.chat_template: instruct needs a chat model")
        try:
            template = field.contents()
        except (UnicodeDecodeError, ValueError, IndexError) as err:
            raise InputError(f"{path}: tokenizer.chat_template cannot be read ({err})") from None
        if not isinstance(template, str):
            raise InputError(f"{path}: tokenizer.chat_template is not a string")
        return cls(template, tokenizer)

    def render(self, messages, add_generation_prompt=False) -> str:
        return self.template.render(messages=messages, add_generation_prompt=add_generation_prompt,
                                    bos_token="", eos_token="")

    def sample(self, messages) -> Sample:
        prompt = self.render(messages[:-1], add_generation_prompt=True)
        full = self.render(messages)
        if not full.startswith(prompt):
            raise InputError("the chat template renders the prompt differently inside the "
                             "whole conversation; cannot find where the response starts")
        prompt_ids = self.tokenizer.encode(prompt)
        response_ids = self.tokenizer.encode(full[len(prompt):])
        return Sample(np.asarray(prompt_ids + response_ids, dtype=np.int32), len(prompt_ids))


def fit(sample: Sample, t_seq: int) -> Sample | None:
    """A sample of at most t_seq+1 tokens: the prompt is cut from the left when
    needed; None when the response alone does not fit."""
    limit = t_seq + 1
    if len(sample.tokens) <= limit:
        return sample
    n_response = len(sample.tokens) - sample.n_prompt
    if n_response + 1 > limit:
        return None
    cut = len(sample.tokens) - limit
    return Sample(sample.tokens[cut:], sample.n_prompt - cut)


def to_rows(samples: list[Sample], t_seq: int, pad_id: int):
    """(seq_ids, positions, labels) int32 [len(samples), t_seq]; labels are -1
    on prompt tokens and padding."""
    n = len(samples)
    ids = np.full((n, t_seq), pad_id, dtype=np.int32)
    labels = np.full((n, t_seq), IGNORE, dtype=np.int32)
    for row, s in enumerate(samples):
        length = len(s.tokens) - 1
        ids[row, :length] = s.tokens[:-1]
        targets = s.tokens[1:].copy()
        targets[: max(s.n_prompt - 1, 0)] = IGNORE   # position t predicts token t+1
        labels[row, :length] = targets
    positions = np.tile(np.arange(t_seq, dtype=np.int32), (n, 1))
    return ids, positions, labels


def split(samples: list, eval_fraction: float, seed: int):
    """A deterministic (train, eval) split."""
    order = np.random.default_rng(seed).permutation(len(samples))
    n_eval = int(round(eval_fraction * len(samples)))
    if eval_fraction > 0 and len(samples) >= 2:
        n_eval = min(max(n_eval, 1), len(samples) - 1)
    return [samples[i] for i in order[n_eval:]], [samples[i] for i in order[:n_eval]]
