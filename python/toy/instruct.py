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
import sys
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from .errors import InputError
from .gguf_file import read_metadata
from .machine import check_fits

IGNORE = -1


@dataclass
class Sample:
    tokens: np.ndarray     # int32 [n], the whole conversation
    trained: np.ndarray    # bool [n]: True on the assistant's tokens, the ones that carry loss

    @classmethod
    def prompt_response(cls, tokens, n_prompt: int) -> "Sample":
        """One prompt of n_prompt tokens, then the response."""
        tokens = np.asarray(tokens, dtype=np.int32)
        return cls(tokens, np.arange(len(tokens)) >= n_prompt)

    def last_response_start(self) -> int:
        """Where the final assistant turn begins."""
        untrained = np.flatnonzero(~self.trained)
        return int(untrained[-1]) + 1 if untrained.size else 0


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
    data = data.removeprefix(b"\xef\xbb\xbf")     # a UTF-8 byte-order mark, as Windows editors write
    objects = []
    for number, raw in enumerate(data.split(b"\n"), start=1):
        where = f"{path}:{number}"
        try:
            line = raw.decode("utf-8")
        except UnicodeDecodeError as err:
            raise InputError(f"{where}: not UTF-8 text (byte 0x{raw[err.start]:02x} at column "
                             f"{err.start + 1}); save the file as UTF-8") from None
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
        if (not isinstance(messages, list) or not messages or
                not all(isinstance(m, dict) and isinstance(m.get("role"), str) and
                        isinstance(m.get("content"), str) for m in messages)):
            raise InputError(f"{where}: 'messages' must be a list of {{role, content}} strings")
        if messages[-1]["role"] != "assistant":
            raise InputError(f"{where}: the last message must be the assistant's response")
        messages = [{"role": m["role"], "content": m["content"]} for m in messages]
    elif isinstance(obj.get("prompt"), str) and isinstance(obj.get("response", obj.get("completion")), str):
        messages = [{"role": "user", "content": obj["prompt"]},
                    {"role": "assistant", "content": obj.get("response", obj.get("completion"))}]
    elif (isinstance(obj.get("instruction"), str) and isinstance(obj.get("output"), str)
          and isinstance(obj.get("input", ""), str)):
        # Alpaca's layout: the input, when there is one, follows the instruction
        request = obj["instruction"] + (f"\n\n{obj['input']}" if obj.get("input") else "")
        messages = [{"role": "user", "content": request}, {"role": "assistant", "content": obj["output"]}]
    else:
        raise InputError(f"{where}: expected 'prompt' and 'response' (or 'completion') strings, "
                         "'instruction' and 'output', or 'messages'")
    for m in messages:
        for text in (m["role"], m["content"]):
            try:
                text.encode("utf-8")
            except UnicodeEncodeError:      # a lone surrogate escape such as "\ud800"
                raise InputError(f"{where}: a string holds an unpaired surrogate "
                                 f"(\\u{ord(text[_first_surrogate(text)]):04x}), which is not text") from None
    return messages


def _first_surrogate(text: str) -> int:
    return next(i for i, c in enumerate(text) if 0xD800 <= ord(c) <= 0xDFFF)


# Gemma's documented turn format: <start_of_turn>{user|model}\n...<end_of_turn>\n,
# the assistant's role called "model" and a system message folded in as the user's
GEMMA_TURNS = (
    "{% for m in messages %}"
    "{% set role = 'model' if m['role'] == 'assistant' else 'user' %}"
    "<start_of_turn>{{ role }}\n{{ m['content'] | trim }}<end_of_turn>\n"
    "{% endfor %}"
    "{% if add_generation_prompt %}<start_of_turn>model\n{% endif %}")


class ChatFormatter:
    """Renders conversations with a GGUF's tokenizer.chat_template (Jinja),
    in chat_template's guarded sandbox: the template is hostile input."""

    def __init__(self, template: str, tokenizer):
        from .chat_template import ChatTemplate

        self.template = ChatTemplate(template)      # InputError if it does not parse
        self.tokenizer = tokenizer

    @classmethod
    def from_gguf(cls, path, tokenizer) -> "ChatFormatter":
        """The GGUF's chat template; for a Gemma 3 GGUF without one (the base
        models ship none), Gemma's turn format."""
        meta = read_metadata(path)
        template = meta.get("tokenizer.chat_template")
        if template is None and meta.get("general.architecture") == "gemma3":
            print(f"toy: {path} has no chat template; using Gemma's turn format", file=sys.stderr)
            template = GEMMA_TURNS
        if template is None:
            raise InputError(f"{path} has no tokenizer.chat_template: instruct needs a chat model")
        if not isinstance(template, str):
            raise InputError(f"{path}: tokenizer.chat_template is not a string")
        return cls(template, tokenizer)

    def render(self, messages, add_generation_prompt=False) -> str:
        """The conversation as the template prints it: InputError (one line)
        for a template that fails, loops or grows without bound on it."""
        return self.template.render(messages=messages, add_generation_prompt=add_generation_prompt,
                                    bos_token="", eos_token="")

    def sample(self, messages) -> Sample:
        """The conversation's tokens, the assistant's turns marked as trained.

        The template renders the conversation up to each assistant turn (with
        the generation prompt) and through it; the difference is the turn's
        text. Each piece is tokenized on its own, so a turn's tokens are
        exactly what the model would generate after its prompt."""
        full = self.render(messages)
        pieces, cursor = [], 0            # (text, trained)
        for i, message in enumerate(messages):
            if message["role"] != "assistant":
                continue
            before = self.render(messages[:i], add_generation_prompt=True)
            through = self.render(messages[:i + 1])
            if not (through.startswith(before) and full.startswith(through) and len(before) >= cursor):
                raise InputError("the chat template renders a conversation's start differently "
                                 "inside the whole conversation; cannot find where a response starts")
            pieces += [(full[cursor:len(before)], False), (through[len(before):], True)]
            cursor = len(through)
        pieces.append((full[cursor:], False))
        tokens, trained = [], []
        for text, is_trained in pieces:
            # BOS (where the model takes one) starts the conversation, not each piece
            ids = self.tokenizer.encode(text, add_bos=None if not tokens else False) if text else []
            tokens += ids
            trained += [is_trained] * len(ids)
        return Sample(np.asarray(tokens, dtype=np.int32), np.asarray(trained, dtype=bool))


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
